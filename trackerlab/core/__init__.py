"""The engine's core: tracked values and the tape they record (``Call``, ``Tracked``), recording on and off, the
one walk that back-propagates over the tape, and the accumulation of ``.grad``."""
