"""Where a read's buffers come from, and who owns them.

* :mod:`.pool`: the large column buffers a read returns, from a pool that keeps freed memory for the
  next read; a block is owned by the object that exports it and returns to the pool when that object
  goes (as an Arrow ``Buffer`` owns its pool allocation).
* :mod:`.scratch`: the transient bytes of a read (a chunk's stored bytes, each page decompressed), in
  buffers each thread reuses, handed out as leases their holder releases; a buffer is reused only
  after its release, and a holder releases only when nothing views it.
"""
