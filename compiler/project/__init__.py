"""What a firmware build consumes besides ``compile -o DIR``: one archive per model
(``compile --format archive``, ``archive.py``) and a complete CMake project around the compiled model
(``tinyfuse project``, ``cmake.py``), both written without ever replacing a file tinyfuse did not write
(``files.py``)."""
