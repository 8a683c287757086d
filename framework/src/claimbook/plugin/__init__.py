"""The pytest plugin: options, hooks and fixtures, and the session that runs the stages."""
