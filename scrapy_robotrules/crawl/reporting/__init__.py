"""Reporting: stats, log lines, signals, the closing summary and the audit trail.

SPEC: none of its own; see its modules.
"""
