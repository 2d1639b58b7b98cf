"""The review service over differential branches: agents propose on branches, humans merge."""
__version__ = "0.1.0"
