"""neardup on Apache Spark: the single-machine answer, computed on the engine.

As a command::

    python -m neardup.spark dedup INPUT... [--master URL | --remote URL]
        [--shuffle-partitions N] [--stage-one-memory SIZE] [--overwrite] [--progress | -q]
        [-o KEPT] [--clusters DIR] [--pairs DIR] [--rejects DIR] [--report DIR]
        [--format jsonl|parquet] [--input-format json|parquet]
        [--sketches DIR] [--save-sketches DIR] [ALGORITHM FLAGS]

INPUT is a file, a directory (searched recursively) or a glob, JSONL or Parquet, on any
filesystem Spark reads (:func:`list_inputs`, :func:`read_inputs`). The algorithm flags
are ``neardup dedup``'s (``--preset recall``, ``--min-shared 2``, ``--strategy
henzinger``, ``--config FILE.toml``, …). Outputs are Spark output directories (part
files whose concatenation in name order is the CLI's file) in the CLI's formats: kept
JSONL lines unchanged, the rejects, clusters and pairs lines with the CLI's fields, and
the CLI's report (:func:`report`, one JSON line in a directory: :func:`read_report`).
``--remote`` runs the job over Spark Connect (the job uses the DataFrame API only).
``--sketches`` and ``--save-sketches`` are the CLI's incremental runs, with the
sketches saved as Parquet (:func:`save_sketches`, :func:`load_sketches`). :func:`run` is
the command on a session you have; :func:`builder` makes the command's session (on a
local master, the JVMs get :data:`JIT_OPTIONS`) and :func:`tune` sets the command's
defaults on a session.

As a function on your own DataFrame: ``dedup(df, **params)`` returns a
:class:`SparkDedup` of DataFrames (``fates``, ``kept``, ``clusters``, ``pairs``) and the
accounting counts.

The modules, in the order a run goes through them: ``inputs`` (which files, one scan),
``settings`` (resolved on the driver, refusals), ``sketching`` (``mapInArrow`` with
:func:`neardup.sketch_batch`), ``numbering`` (input order from the sketches),
``job`` (:func:`dedup`: repeated ids, the exact pre-pass, the stages, fates),
``candidates`` (stage one), ``verifying`` (stage two), ``components`` (clusters),
``outputs``, ``snapshots`` (saved sketches), ``report``, ``command``; ``session``
(classic or Connect, defaults, kept frames) and ``columns`` beside them.

Every stage runs on the executors; only counts (and one row per input split, to
number the records) reach the driver:

1. sketching in ``mapInArrow`` — JSONL lines parsed there by the CLI's own parser —,
   the one pass over the input (the text is dropped after);
2. a global ordinal per record in input order (files sorted by path, records in file
   order; a DataFrame's own order otherwise), from the kept sketches;
3. repeated ids rejected (the first record keeps its id), then the exact pre-pass:
   group by exact fingerprint, the first record of each group stays (both found by one
   aggregation over ``(key, ordinal)`` alone);
4. stage one: each task packs its records' bucket keys into one blob per shard
   (:class:`neardup.KeyShards`), each shard goes to a partition of its own, and
   :class:`neardup.ShardRuns` sorts its rows natively (spilling sorted runs to the
   executor's local disk past ``spark.neardup.stageOneMemory``,
   :data:`STAGE_ONE_MEMORY`) and pairs each bucket under the big-bucket rule, memory
   bounded whatever a bucket's size; each pair once;
5. stage two: :func:`neardup.verify_pairs` on the two sketches of each pair;
6. clusters: connected components of the verified pairs (:func:`components`): up to
   ``ONE_TASK_EDGES`` (2^22) distinct pairs, by union-find in one task
   (:func:`neardup.components_batch`); past it, by large-star / small-star rounds over
   DataFrames, checkpointed every few rounds; the representative is the component's
   first record (``keep="first"``);
7. fates joined back to the records: read = kept + exact + near + rejected; the kept
   records taken from a second read of the input (as the CLI's second pass does),
   written where they are read when the scan's splits fall in input order (one file),
   sorted into input order otherwise.

Settings the distributed job does not support yet are refused: boilerplate removal,
the high-recall union, ``keep`` other than ``first``, and stage-one
generators other than Broder's supershingles.
"""

from .columns import INPUT, JSON_LINE, ORD, POSITION
from .command import main, run
from .components import components
from .inputs import exists, list_inputs, read_inputs
from .job import SparkDedup, StageHook, dedup
from .numbering import with_ordinal
from .outputs import read_report, refuse_existing, write_kept, write_report
from .report import report
from .session import (JIT_OPTIONS, SHUFFLE_CODEC, STAGE_ONE_MEMORY, builder, default_parallelism,
                      release_checkpoints, shuffle_partitions, tune)
from .sketching import TaskHook
from .snapshots import SavedSketches, load_sketches, save_sketches

__all__ = [
    "INPUT", "JIT_OPTIONS", "JSON_LINE", "ORD", "POSITION", "SHUFFLE_CODEC", "STAGE_ONE_MEMORY", "SavedSketches",
    "SparkDedup", "StageHook", "TaskHook",
    "builder", "components", "dedup", "default_parallelism", "exists", "list_inputs", "load_sketches", "main",
    "read_inputs", "read_report", "refuse_existing", "release_checkpoints", "report", "run",
    "save_sketches", "shuffle_partitions", "tune", "with_ordinal", "write_kept", "write_report",
]
