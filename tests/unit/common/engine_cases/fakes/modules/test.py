"""Fake ``test`` execution module for the engine's unit tests."""

import time


def arg(*args, **kwargs):
    return {"args": args, "kwargs": kwargs}


def echo(text, **kwargs):
    return text


def sleep(length, **kwargs):
    time.sleep(float(length))
    return True
