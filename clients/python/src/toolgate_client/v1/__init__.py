"""Stubs generated from proto/toolgate/v1 by generate.py; do not edit."""
