"""The OP benchmark: ``opbench bench``, ``opbench compare`` and ``opbench report``.

Measuring (:mod:`timers`, :mod:`stopping`, :mod:`directions`, :mod:`runner`), the value
object (:mod:`stats`, :mod:`results`) and rendering (:mod:`render`, :mod:`compare`,
:mod:`report`) are separate pieces, as in ``torch.utils.benchmark``.
"""
