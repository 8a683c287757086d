"""Storage: atomic standard-JSON files, results files and their merge, baseline file, history."""
