"""Configuration: the ROBOTRULES_* settings read and checked, operator settings, site policies."""
