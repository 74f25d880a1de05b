"""Reporting: stats, log lines, signals, the closing summary and the audit trail."""
