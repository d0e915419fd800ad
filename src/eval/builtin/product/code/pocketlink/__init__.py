"""Pocketlink: a tiny self-hosted link shortener."""

__version__ = "1.4.0"
