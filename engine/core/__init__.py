"""The shared vocabulary every layer speaks: parse events, wire chunks, tools, user files, JSON text, shipped data."""
