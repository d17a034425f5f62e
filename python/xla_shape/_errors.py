"""Errors raised by the package's Python layer: the compiled module's classes, with ``kind``."""

from __future__ import annotations

from xla_shape._xla_shape import Error


def error(kind: str, message: str) -> Error:
    """An :class:`Error` whose ``kind`` names the problem, as the compiled module's errors do.

    >>> e = error("NotContiguous", "the array is not contiguous")
    >>> e.kind, str(e)
    ('NotContiguous', 'the array is not contiguous')
    """
    exception = Error(message)
    exception.kind = kind
    return exception
