"""Fake ``file`` execution module for the engine's unit tests."""

import os


def file_exists(path, **kwargs):
    return os.path.isfile(path)
