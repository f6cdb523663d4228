"""Whoosh's multiprocess writer, its indexing processes started by a fork server.

Whoosh starts its sub-writers with multiprocessing's default start method, a plain fork on Linux. A fork
copies only the calling thread: a lock that another thread of the parent held at that moment (a reader's
inference threads, tqdm's monitor, an import under way) stays held in the child forever, and the child
can hang on it while the parent waits in ``writer.commit()`` for the child to exit. That is how a full
build once hung in a test run that had loaded the reader. A fork server is a small single-threaded
process started once; each sub-writer is forked from it, so it inherits no other thread's locks.
Everything else, what the sub-writers do and how their segments are committed, is Whoosh's.
"""
from __future__ import annotations

import multiprocessing

from whoosh.multiproc import MpWriter, SubWriterTask

_CONTEXT = multiprocessing.get_context("forkserver")


class _SubWriterProcess(SubWriterTask):
    """Whoosh's sub-writer, started by the fork server (its state is pickled to it)."""

    _start_method = "forkserver"
    _Popen = staticmethod(_CONTEXT.Process._Popen)


class ParallelWriter(MpWriter):
    """``MpWriter`` whose job and result queues and indexing processes belong to the fork-server context."""

    def __init__(self, ix, procs: int, **kwargs):
        super().__init__(ix, procs=procs, **kwargs)
        # A queue's locks must come from the start method of the processes that share it.
        self.jobqueue = _CONTEXT.Queue(self.procs * 4)
        self.resultqueue = _CONTEXT.Queue()

    def _new_task(self):
        task = _SubWriterProcess(self.storage, self.indexname, self.jobqueue, self.resultqueue, self.subargs,
                                 self.multisegment)
        self.tasks.append(task)
        task.start()
        return task
