"""Settings whose name changed: the value of a setting whose config may
still carry its old name (pipelines saved and configs written by earlier
versions read it; nothing writes it)."""

from typing import Optional


def renamed_setting(
    name: str, key: str, value: object, old_key: str, old_value: Optional[object], default: object
) -> object:
    """The value of setting ``key`` of component ``name``, whose old name is
    ``old_key``: ``old_value`` when only it was set (``value`` is then the
    default that spaCy filled in); ``value`` otherwise; a ValueError when both
    were set and differ."""
    if old_value is None or old_value == value:
        return value
    if value != default:
        raise ValueError(
            f"'{name}' has {key} = {value!r} and {old_key} = {old_value!r}: {old_key} is the "
            f"old name of {key}; remove it"
        )
    return old_value
