// replaced by the job spec loader
