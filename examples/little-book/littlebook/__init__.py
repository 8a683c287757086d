"""The little book's own code: the layers its claims are about (numpy only)."""
