"""The wall: who may open which case, the statements that keep a read inside it, the sight and its triggers,
and the guard on what is written back."""
