"""Configuration: the ROBOTRULES_* settings read and checked, operator settings, site policies.

SPEC: none of its own; see its modules.
"""
