"""A misspelt keyword and a value outside a Literal: both type checkers must refuse it."""

from __future__ import annotations

import neardup

neardup.Pipeline(shingel=5)
neardup.Pipeline(candidates="charikar_blocks")
