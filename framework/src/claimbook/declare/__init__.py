"""What a claim test declares and records: the claim marker, measured values, seeds."""
