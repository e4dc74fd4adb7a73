// Keeps wick_parity a valid library while tests/parity is empty.
