// replaced by the operators
