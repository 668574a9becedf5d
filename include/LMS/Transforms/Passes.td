//===- Passes.td - LMS transformation passes ---------------*- tablegen -*-===//
//
// The passes that plan and rewrite programs for large model support.
//
//===----------------------------------------------------------------------===//

#ifndef LMS_TRANSFORMS_PASSES_TD
#define LMS_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

// Options several passes share, spelled once.
defvar LMSAlignmentOption =
  Option<"alignment", "alignment", "uint64_t", "1",
         "Round every buffer up to this many bytes">;
// The planning passes' alignment: with arena=true they plan the arena the
// lowering carves, at its granularity unless told otherwise.
defvar LMSPlanningAlignmentOption =
  Option<"alignment", "alignment", "uint64_t", "0",
         "Round every buffer up to this many bytes (default 0: 256 with "
         "arena=true, the granularity the arena lowering carves at; exact "
         "bytes with arena=false)">;
defvar LMSDynamicBytesOption =
  Option<"dynamicBytes", "dynamic-bytes", "std::string", "\"\"",
         "Upper bound (a size such as 64MiB) for values of dynamic shape "
         "without an 'lms.max_bytes' attribute">;
defvar LMSKeepArgumentsOption =
  Option<"keepArguments", "keep-arguments", "bool", "false",
         "Keep function arguments resident to the end">;
defvar LMSBudgetOption =
  Option<"budget", "budget", "std::string", "\"\"",
         "Device-memory budget (bytes with a unit, or a percentage of the "
         "peak); wins over --lms-budget">;
defvar LMSDeviceOption =
  Option<"device", "device", "std::string", "\"\"",
         "Device preset of the cost model (default: the module's DLTI "
         "spec, else v100-16g)">;
defvar LMSHostBudgetOption =
  Option<"hostBudget", "host-budget", "std::string", "\"\"",
         "Host memory a plan may hold at once (bytes with a unit); wins "
         "over --lms-host-budget; default: the device preset's host "
         "memory">;
defvar LMSArenaOption =
  Option<"arena", "arena", "bool", "true",
         "The budget bounds the arena every buffer is placed in (at an "
         "offset, as the arena lowering carves them), not only the sum of "
         "live bytes: plans are made again for less until it fits">;

// The planners' names, shared by every pass that picks one (the graph core's
// enums; lms-plan and the transform ops spell them the same way).
defvar SwapPlannerValues = [{::llvm::cl::values(
  clEnumValN(::lms::SwapMethod::LMS, "lms",
             "LMS's planner: least simulated stall"),
  clEnumValN(::lms::SwapMethod::TFLMS, "tflms",
             "TFLMS v2's rules with its auto-tuning (baseline)"),
  clEnumValN(::lms::SwapMethod::SwapAll, "swap-all",
             "offload every tensor over every gap (baseline)"),
  clEnumValN(::lms::SwapMethod::SaveOnCpu, "save-on-cpu",
             "PyTorch's save_on_cpu: what the forward saves for the "
             "backward, copied on the compute stream (baseline)"))}];
defvar RematPlannerValues = [{::llvm::cl::values(
  clEnumValN(::lms::RematMethod::Heuristic, "heuristic",
             "the interval search (default)"),
  clEnumValN(::lms::RematMethod::Exact, "exact",
             "Checkmate's MILP on CBC"),
  clEnumValN(::lms::RematMethod::Moccasin, "moccasin",
             "Moccasin's constraint program on Gecode"),
  clEnumValN(::lms::RematMethod::DTR, "dtr",
             "Dynamic Tensor Rematerialization's greedy eviction"),
  clEnumValN(::lms::RematMethod::ChenGreedy, "chen-greedy",
             "Chen et al.'s greedy segments"),
  clEnumValN(::lms::RematMethod::ChenSqrt, "chen-sqrt",
             "Chen et al.'s sqrt(n) checkpoints"),
  clEnumValN(::lms::RematMethod::Segments, "segments",
             "torch.utils.checkpoint over segments of the forward (a "
             "baseline)"))}];

def LMSStrip : Pass<"lms-strip"> {
  let summary = "Undo LMS rewriting: remove swaps and inline recomputations";
  let description = [{
    Turns a program rewritten by the LMS passes back into its origin, so that
    the two can be diffed:

    * every `lms.swap_in` whose handle comes from an `lms.swap_out` is replaced
      by the swapped-out value (chains of swaps collapse to the first value);
      the `lms.swap_wait` and `lms.swap_out` ops that are left unused go away;
    * every `lms.recompute` is inlined at its position, and each inlined op
      is replaced by the op it copies (the one whose `lms.original` id its
      `lms.rederived` names; without one, an equivalent op that dominates
      it), so the recomputation disappears; views re-derived after a
      swap-in merge back the same way, and no `lms.rederived` or
      `lms.original` mark is left;
    * calls of borrowing copies of callees (`@f_lms_borrow_...`) call `@f`
      again, and copies nobody calls any more are erased;
    * the copies that make bufferization's decisions explicit
      (`bufferization.alloc_tensor copy(%x) {lms.copy}`) become `%x`.

    Input:

    ```mlir
    %h = lms.swap_out %t : tensor<64xf32> -> !lms.host<tensor<64xf32>>
    lms.swap_wait %h : !lms.host<tensor<64xf32>>
    ...
    %u = lms.swap_in %h : !lms.host<tensor<64xf32>> -> tensor<64xf32>
    %r = lms.recompute (%a) : (tensor<64xf32>) -> tensor<64xf32> {
    ^bb0(%x: tensor<64xf32>):
      %e = tensor.empty() : tensor<64xf32>
      %y = linalg.exp ins(%x : tensor<64xf32>) outs(%e : tensor<64xf32>) -> tensor<64xf32>
      lms.yield %y : tensor<64xf32>
    }
    "use"(%u, %r) : (tensor<64xf32>, tensor<64xf32>) -> ()
    ```

    Output (where `%y0` is the original `linalg.exp` of `%a`):

    ```mlir
    "use"(%t, %y0) : (tensor<64xf32>, tensor<64xf32>) -> ()
    ```

    A swap-in whose handle is not produced by an `lms.swap_out` (a block
    argument of type `!lms.host`) cannot be undone; the pass leaves it and
    emits a warning at it.
  }];
  let statistics = [
    Statistic<"numSwapsRemoved", "swaps-removed",
              "Number of lms.swap_in ops replaced by their original value">,
    Statistic<"numRecomputesInlined", "recomputes-inlined",
              "Number of lms.recompute ops inlined">,
    Statistic<"numOpsMerged", "ops-merged",
              "Number of inlined ops replaced by an equivalent original">
  ];
}

def LMSPrintLiveness : Pass<"lms-print-liveness", "ModuleOp"> {
  let summary = "Print buffer liveness and memory per op of every function";
  let description = [{
    For every function with a body, prints one line per op of its body with
    the buffers live before it (`live-in`), after it (`live-out`) and those
    released right after it (`dying`), then the memory profile: the peak, the
    op at the peak, the buffers live at the peak, and the device bytes before,
    during and after every op. Buffers are named by the value that allocates
    them (a destination-style result written in place is its init's buffer).

    ```
    // liveness of @f
    op 0 tensor.empty: live-in: {%arg0} live-out: {%arg0, %0} dying: {}
    ...
    // memory of @f: peak 768 bytes at op 2 linalg.matmul, host peak 0 bytes
    // live at the peak: %0 (256) %arg0 (256) %arg1 (256)
    op 0 tensor.empty: before 512 during 768 after 768
    ```

    The output goes to stdout; the IR is not changed.
  }];
  let options = [
    LMSAlignmentOption,
    LMSDynamicBytesOption,
    LMSKeepArgumentsOption,
  ];
}

def LMSReportMemory : Pass<"lms-report-memory", "ModuleOp"> {
  let summary = "Report where the device memory goes: peak, who is live, time";
  let description = [{
    For every function with a body: the peak device memory in the textual
    order, the op at the peak with its location, the largest buffers live at
    the peak, the host memory held by offloaded values, the smallest budget
    any swap plan can meet, and the estimated time on the chosen device.

    `format=text` (default) is for people; `format=json` is a stable document
    (see docs/Analyses.md):

    ```json
    {"device": {"name": "v100-16g", ...},
     "functions": [
       {"name": "f", "peak_bytes": 768,
        "peak_op": {"index": 2, "name": "linalg.matmul", "loc": "f.mlir:5:8"},
        "live_at_peak": [ {"value": "%0", "bytes": 256, "loc": "f.mlir:3:8"} ],
        "timeline": [ {"index": 0, "name": "tensor.empty", "before": 512,
                       "live_bytes": 768, "after": 768} ],
        ...} ]}
    ```

    `format=svg` draws the live bytes over the schedule with the peak marked
    and, with `budget=`, the budget line; for a function that LMS has
    rewritten it draws the curve without LMS (from `--lms-strip` of a copy)
    and with it, and marks the swaps and recomputations.

    The report goes to `file=<path>` (default: stdout). The IR is not
    changed.
  }];
  let options = [
    Option<"format", "format", "ReportFormat", "ReportFormat::Text",
           "Output format: text (default), json or svg", [{::llvm::cl::values(
             clEnumValN(ReportFormat::Text, "text", "lines to read"),
             clEnumValN(ReportFormat::Json, "json",
                        "one object per function (schema in docs/Analyses.md)"),
             clEnumValN(ReportFormat::Svg, "svg",
                        "the memory curve over the schedule"))}]>,
    Option<"file", "file", "std::string", "\"-\"",
           "Write the report to this file ('-' for stdout)">,
    Option<"device", "device", "std::string", "\"\"",
           "Device preset for time estimates (default: the module's DLTI "
           "spec, else v100-16g)">,
    Option<"budget", "budget", "std::string", "\"\"",
           "Budget line of the picture (bytes with a unit, or a percentage "
           "of the peak); a function's 'lms.budget' attribute wins">,
    Option<"top", "top", "unsigned", "10",
           "How many of the largest live values at the peak to list">,
    Option<"arena", "arena", "bool", "true",
           "The budget's verdict is on the device memory as the arena "
           "lowering allocates it (as planning with arena=true bounds it); "
           "false: on the live bytes, with the arena's need noted">,
    LMSPlanningAlignmentOption,
    LMSDynamicBytesOption,
    LMSKeepArgumentsOption,
  ];
}

def LMSInsertSwaps : Pass<"lms-insert-swaps", "ModuleOp"> {
  let summary = "Offload tensors to host memory so that every function fits "
                "a device-memory budget";
  let description = [{
    Plans and inserts `lms.swap_out` / `lms.swap_wait` / `lms.swap_in` so that
    the peak device memory of every function (as the memory analysis measures
    it) is at most the budget, with the least stall the planner can find under
    the device model.

    For each gap in a tensor's uses, the tensor can be copied to the host
    after its last use before the gap, released where the program waits for
    that copy, and copied back before its next use; the later uses read the
    copy. The planner works on the op at the peak: among the tensors live
    across it, it offloads the one that releases the most bytes for the least
    estimated stall, with the release placed where the copy-out has finished
    behind compute and the prefetch where the copy-in finishes before the
    next use (compute in between covers the copy time), or closer to the peak
    with the stall accounted when the budget demands it. It then drops
    offloads that are not needed, reuses host copies of unchanged values and
    refines the prefetch and release points by simulating the step (compute
    stream, one copy stream each way). A tensor may be offloaded over several
    gaps; function arguments are candidates too. Views of an offloaded value
    made before the gap and read after it (reshapes, slices) are re-derived
    from the swapped-in value right before the next use, marked `lms.rederived = K` where the view they
    copy carries `lms.original = K` (`--lms-strip` merges them back and
    removes both marks).

    A loop (or another op with regions) whose body's peak keeps it over the
    budget even with only its operands and results beside it is planned
    inside first: its body gets what the budget leaves beside them, and
    values of one iteration are offloaded and fetched within it (loops in
    the body first, the same way); the function is planned after, around
    the loop. When that is not enough, the largest value the loop reads
    from outside (a loop-invariant) is offloaded before it and fetched
    inside each iteration (and once more after the loop where the program
    reads it there too). `stats=true` counts the
    `bodies-planned` and the values `fetched-per-iteration`.

    Input (budget 3 MiB; every tensor is 1 MiB):

    ```mlir
    func.func @f(%x: tensor<512x512xf32>, %w: tensor<512x512xf32>) -> tensor<512x512xf32> {
      %a = linalg.matmul ins(%x, %w ...) outs(...)
      ...   // ops that do not read %x
      %d = linalg.add ins(%x, %c ...) outs(...)
    ```

    Output:

    ```mlir
      %a = linalg.matmul ins(%x, %w ...) outs(...)
      %h = lms.swap_out %x : tensor<512x512xf32> -> !lms.host<tensor<512x512xf32>>
      ...
      lms.swap_wait %h : !lms.host<tensor<512x512xf32>>
      ...
      %x1 = lms.swap_in %h : !lms.host<tensor<512x512xf32>> -> tensor<512x512xf32>
      ...
      %d = linalg.add ins(%x1, %c ...) outs(...)
    ```

    The budget comes from a function's `lms.budget` attribute, else this
    pass's `budget=` option, else `--lms-budget`, else the device's capacity.
    Sizes take units (`B`, `KB`, `KiB`, `MB`, `MiB`, `GB`, `GiB`) or a
    percentage (`60%`): of the whole program's unplanned peak for the
    options (resolved once, before any rewrite), of the function's own for
    an `lms.budget` attribute. Callees are planned first, inside the budget
    left at their tightest call site; a call that lends an operand the
    caller uses again goes to a borrowing copy of its callee
    (`@<callee>_lms_borrow_...`, see `--lms-deallocate`), planned for that
    way of being called. Constants and globals are host-backed: a constant's
    device copy may be dropped and fetched again (an `lms.recompute` of the
    constant; no device-to-host copy). A function that already fits is left
    unchanged (running the pass twice adds nothing).
    When no plan can fit (an op's operands and results alone exceed the
    budget), the pass fails with an error at that op naming the smallest
    feasible budget.

    `planner=tflms`, `planner=swap-all` and `planner=save-on-cpu` run the
    baselines of the benchmarks instead: TFLMS v2's rules with its
    auto-tuning, offloading every tensor over every gap, and PyTorch's
    `torch.autograd.graph.save_on_cpu` (every tensor the forward makes and
    the backward reads, the backward being the ops after the function's
    first result, a training step's loss, is computed:
    copied out after its last forward use and back at its first backward
    read, each copy waited for at once).
  }];
  let options = [
    LMSBudgetOption,
    LMSDeviceOption,
    Option<"planner", "planner", "::lms::SwapMethod", "::lms::SwapMethod::LMS",
           "Offloading planner: lms (default), tflms (TFLMS v2 baseline), "
           "swap-all or save-on-cpu (PyTorch's)", SwapPlannerValues>,
    LMSHostBudgetOption,
    LMSArenaOption,
    LMSPlanningAlignmentOption,
    LMSDynamicBytesOption,
    Option<"swapoutThreshold", "swapout-threshold", "int", "-1",
           "Offload a tensor only over gaps of more than this many ops "
           "(TFLMS's threshold; -1: automatic)">,
    Option<"swapinAhead", "swapin-ahead", "int", "-1",
           "Prefetch exactly this many ops before the next use (TFLMS's "
           "ahead; -1: from the copy time)">,
    Option<"swapinGroupby", "swapin-groupby", "int", "-1",
           "Uses closer than this many ops share one swap-in (TFLMS's "
           "groupby; -1: automatic)">,
    Option<"printStatistics", "stats", "bool", "false",
           "Print the statistics below to stderr (Debian's LLVM is built "
           "without statistics, so -mlir-pass-statistics shows none), and "
           "the replans (arena=true) when there were any">,
  ];
  let statistics = [
    Statistic<"numTensorsSwapped", "tensors-swapped",
              "Number of distinct tensors offloaded">,
    Statistic<"numSwapOuts", "swap-outs", "Number of lms.swap_out inserted">,
    Statistic<"numSwapIns", "swap-ins", "Number of lms.swap_in inserted">,
    Statistic<"bytesToHost", "bytes-to-host",
              "Bytes copied from device to host">,
    Statistic<"bytesToDevice", "bytes-to-device",
              "Bytes copied from host to device">,
    Statistic<"stallMicroseconds", "estimated-stall-us",
              "Estimated stall of the compute stream, in microseconds">,
  ];
  let dependentDialects = ["::mlir::lms::LMSDialect"];
}

def LMSRematerialize : Pass<"lms-rematerialize", "ModuleOp"> {
  let summary = "Recompute tensors instead of keeping them so that every "
                "function fits a device-memory budget";
  let description = [{
    Plans which values to free after a use and compute again before a later
    one (a rematerialization plan of the graph core: the retention-interval
    search by default, the Checkmate MILP with `planner=exact`, Moccasin's
    constraint program with `planner=moccasin`), and writes
    each recomputation as an `lms.recompute` whose body clones the producing
    ops. The later uses read the recomputed value, so the original is freed
    after its last use before the gap. A recomputation whose inputs were
    freed too reads their recomputations (they come first: the regions are
    chained).

    The unit of recomputation is the chain of ops that produces one buffer:
    an op with its `tensor.empty` and the destination-style ops that write
    the same buffer in place right after it (`tensor.empty`, `linalg.fill`,
    `linalg.matmul`, say), when each intermediate value has no other use.
    Only ops free of memory effects are recomputed; arguments, returned
    values, swaps and calls never are.

    A loop (or another op with regions) whose body's peak keeps it over the
    budget even with only its operands and results beside it is planned
    inside first, as `--lms-insert-swaps` does: values of one iteration are
    recomputed within it.

    Input (budget 12 KiB; every tensor is 4 KiB):

    ```mlir
    %e0 = tensor.empty() : tensor<1024xf32>
    %a = linalg.exp ins(%x : tensor<1024xf32>) outs(%e0 : tensor<1024xf32>) -> tensor<1024xf32>
    ...                     // needs 12 KiB without %a
    %d = linalg.add ins(%a, %c ...) outs(...)
    ```

    Output:

    ```mlir
    %e0 = tensor.empty() : tensor<1024xf32>
    %a = linalg.exp ins(%x ...) outs(%e0 ...)
    ...
    %a1 = lms.recompute (%x) : (tensor<1024xf32>) -> tensor<1024xf32> {
    ^bb0(%in: tensor<1024xf32>):
      %e = tensor.empty() : tensor<1024xf32>
      %r = linalg.exp ins(%in : tensor<1024xf32>) outs(%e : tensor<1024xf32>) -> tensor<1024xf32>
      lms.yield %r : tensor<1024xf32>
    }
    %d = linalg.add ins(%a1, %c ...) outs(...)
    ```

    The budget resolves as for `--lms-insert-swaps` (`lms.budget`, then
    `budget=`, then `--lms-budget`, then the device's capacity). A function
    that fits is left unchanged. A budget below the smallest feasible one is
    an error at the op that needs more; a budget no plan was found for within
    its work limit is an error naming the planner. After the rewrite the pass
    checks that the memory analysis of the function fits the budget.
  }];
  let options = [
    LMSBudgetOption,
    LMSDeviceOption,
    Option<"planner", "planner", "::lms::RematMethod",
           "::lms::RematMethod::Heuristic",
           "Recomputation planner: heuristic (default), exact (Checkmate "
           "MILP on CBC), moccasin (Moccasin's constraint program on "
           "Gecode), dtr, chen-greedy, chen-sqrt or segments (PyTorch's "
           "checkpointing)", RematPlannerValues>,
    Option<"timeLimit", "time-limit", "double", "0",
           "Wall-clock cap in seconds per function (0: none; the exact "
           "planner then stops at 60 s), a hard one: a search it stops "
           "before a first plan is an error. The search is bounded by "
           "'iterations', so the output depends only on the input; a cap "
           "that bites is reported, since the plan then depends on the "
           "machine">,
    Option<"iterations", "iterations", "uint64_t", "0",
           "Work limit of the improving planners in search iterations (0: "
           "chosen from the function's size)">,
    Option<"seed", "seed", "uint64_t", "1",
           "Seed of the randomized search">,
    LMSArenaOption,
    LMSPlanningAlignmentOption,
    LMSDynamicBytesOption,
    Option<"printStatistics", "stats", "bool", "false",
           "Print the statistics below to stderr, and the replans "
           "(arena=true) when there were any">,
  ];
  let statistics = [
    Statistic<"numRecomputes", "recomputes",
              "Number of lms.recompute ops inserted">,
    Statistic<"numOpsCloned", "ops-cloned",
              "Number of ops cloned into recompute regions">,
    Statistic<"extraMicroseconds", "extra-compute-us",
              "Estimated extra compute time, in microseconds">,
  ];
  let dependentDialects = ["::mlir::lms::LMSDialect"];
}

def LMSPlan : Pass<"lms-plan", "ModuleOp"> {
  let summary = "Fit every function into a device-memory budget with swaps "
                "and recomputations together, choosing the faster mix";
  let description = [{
    The combined planner. A function that does not fit is first reordered
    for a smaller peak, as `--lms-schedule` does (stopping as soon as the
    order fits; `schedule=false` keeps the order as written): when the new
    order fits, that is the whole plan. Otherwise, it tries
    offloading only (`--lms-insert-swaps`), recomputing only
    (`--lms-rematerialize`), mixes where offloading first brings the peak
    down part of the way (a quarter, half, three quarters of the excess) and
    recomputation does the rest, and the joint planner of the graph core:
    per tensor, keep it, recompute it or offload it, searched together
    under the device model (recomputation takes a share of the excess, the
    tensors whose recomputation costs most are left to the links, and
    offloading fits the rest; every trial is timed by the simulator), then
    written in that order. Every candidate is a real rewrite of the
    function, timed by the memory analysis' simulator (compute stream, one
    copy stream each way, the recomputations' own cost), and the fastest one
    that fits is kept. Per tensor, this chooses between keeping it, copying
    it out and back (cost: the copy time not hidden behind compute) and
    recomputing it (cost: its compute, recursively).

    Splitting (`split=true`, the default) comes before the candidates. An
    op whose operands and results alone exceed the budget is split into
    loops over slices, as `--lms-split` does. Where every op fits whole,
    the function is also planned split (on a copy beside it, for each
    `split-fraction`): ops at the peak then hold one slice of their
    intermediates, and less is offloaded or recomputed around them, at the
    cost of the loops' launches. The split is kept when its plan is at
    least 1% faster; otherwise the function's ops stay the same ops. Each
    kind of split op then gets its own slice count (`split-refine`): its
    aim is tried at twice and half the bytes (fewer and more slices), and
    a change stays when the planned step is faster.

    A loop (or another op with regions) whose body's peak keeps it over the
    budget even with only its operands and results beside it is planned
    inside first (after the order, before splitting): offloading and
    recomputing within one iteration are both tried on its body, with what
    the budget leaves beside the loop's operands and results, and the one
    the simulator times faster stays; loop-invariants are fetched inside
    each iteration where that is not enough (as `--lms-insert-swaps` does;
    not with `strategy=recompute`).

    `strategy=swap` and `strategy=recompute` force one kind (in bodies too);
    `strategy=joint` runs the joint planner alone. The options of
    the two passes apply (`time-limit` and `remat-planner` to the
    recomputation, `swap-planner` to the offloading). With `stats=true` the
    pass prints the chosen mix and the estimated step time of each
    candidate to stderr.

    The budget resolves as for `--lms-insert-swaps`; when no candidate fits,
    the error is the one the offloading planner gives (at the op that needs
    more memory, with the smallest feasible budget).
  }];
  let options = [
    LMSBudgetOption,
    LMSDeviceOption,
    Option<"strategy", "strategy", "PlanStrategy", "PlanStrategy::Auto",
           "Which plans to make and compare: auto (default), joint, swap or "
           "recompute", [{::llvm::cl::values(
             clEnumValN(PlanStrategy::Auto, "auto",
                        "the fastest of offloading, recomputation, four "
                        "mixes and the joint planner"),
             clEnumValN(PlanStrategy::Joint, "joint",
                        "the joint planner alone (per tensor: offload, "
                        "recompute or keep)"),
             clEnumValN(PlanStrategy::Swap, "swap", "offloading alone"),
             clEnumValN(PlanStrategy::Recompute, "recompute",
                        "recomputation alone"))}]>,
    Option<"schedule", "schedule", "bool", "true",
           "Reorder the ops of a function that does not fit for a smaller "
           "peak before offloading or recomputing">,
    Option<"split", "split", "bool", "true",
           "Split ops into loops over slices (as --lms-split does): the op "
           "that sets the smallest feasible budget when that is above the "
           "budget, and otherwise where the plan of the split function is "
           "at least 1% faster than the plan without splitting">,
    ListOption<"splitFractions", "split-fraction", "double",
           "When splitting, the smallest feasible budget to reach, as a "
           "fraction of the budget, in (0, 1] (the rest is left to what "
           "stays live across the split ops); several (comma-separated): "
           "each is planned and the fastest simulated step wins (default: "
           "0.25,1)">,
    Option<"refineSplits", "split-refine", "bool", "true",
           "When splitting, also try each kind of split op (up to three) "
           "with twice and half its aim (fewer and more slices), keeping "
           "each change whose plan the simulator times faster">,
    Option<"rematPlanner", "remat-planner", "::lms::RematMethod",
           "::lms::RematMethod::Heuristic",
           "Recomputation planner: heuristic (default), exact (Checkmate "
           "MILP on CBC), moccasin (Moccasin's constraint program on "
           "Gecode), dtr, chen-greedy, chen-sqrt or segments (PyTorch's "
           "checkpointing)", RematPlannerValues>,
    Option<"swapPlanner", "swap-planner", "::lms::SwapMethod",
           "::lms::SwapMethod::LMS",
           "Offloading planner: lms (default), tflms, swap-all or "
           "save-on-cpu", SwapPlannerValues>,
    LMSHostBudgetOption,
    Option<"timeLimit", "time-limit", "double", "0",
           "Wall-clock cap in seconds of the recomputation planner per "
           "candidate (0: none; see --lms-rematerialize)">,
    Option<"iterations", "iterations", "uint64_t", "0",
           "Work limit of the recomputation planner in search iterations "
           "(0: chosen from the function's size)">,
    LMSArenaOption,
    LMSPlanningAlignmentOption,
    LMSDynamicBytesOption,
    Option<"printStatistics", "stats", "bool", "false",
           "Print the candidates and the choice to stderr">,
  ];
  let dependentDialects = ["::mlir::lms::LMSDialect"];
}

def LMSSchedule : Pass<"lms-schedule", "ModuleOp"> {
  let summary = "Reorder the ops of every function for a smaller peak, "
                "before any offload or recomputation";
  let description = [{
    The order a program runs its ops in decides how long its tensors stay
    live: a function that computes two branches interleaved holds both
    branches' tensors at once, the same function finishing one branch
    before the next holds one. This pass reorders the ops of every function
    body so that the analysed peak drops, computing every value once (no
    offloading, no recomputation), and changes nothing else.

    Only orders the IR allows are considered: every value after its
    definition (also uses from inside nested regions), ops with memory
    effects in their order wherever one of them writes (reads commute with
    reads; allocation alone is not an effect; an op of unknown effects, a
    call say, is ordered with every other op with effects), the terminator
    last. The search is the graph core's (`LMS/Graph/Schedule.h`): XLA-style
    list and depth-first schedulers, then simulated annealing around the
    peak under a work limit (`iterations`), deterministic for a `seed`.
    The new order is analysed again (bufferization's in-place decisions
    included) and kept only when the peak is smaller; otherwise the function
    is left as it was. Blocks nested in the body (loop bodies, `scf.if`
    branches; not linalg bodies) are reordered the same way first,
    innermost first. Functions are scheduled callees first. Ops of
    dialects the tool does not know (IR parsed with
    `--allow-unregistered-dialect`) may do anything and keep their place,
    unless `pure-dialects` names their dialect (`pure-dialects=mhlo` for
    the ByteIR/XLA exports of `../shared/data/models`).

    ```mlir
    // Before: peak 210 bytes (a1 and b1 live together).
    %a1 = "big"(%x) ...  %b1 = "big"(%x) ...
    %a2 = "small"(%a1) ... %b2 = "small"(%b1) ...
    // After: peak 111 bytes.
    %a1 = "big"(%x) ...  %a2 = "small"(%a1) ...
    %b1 = "big"(%x) ...  %b2 = "small"(%b1) ...
    ```

    `--lms-plan` runs the same scheduling on a function that does not fit
    its budget before it offloads or recomputes (`schedule=false` turns it
    off). With `stats=true` the pass prints each function's peak before and
    after to stderr.
  }];
  let options = [
    Option<"iterations", "iterations", "uint64_t", "0",
           "Work limit of the search in evaluated orders (0: chosen from the "
           "function's size)">,
    Option<"seed", "seed", "uint64_t", "1", "Seed of the search">,
    ListOption<"pureDialects", "pure-dialects", "std::string",
               "Unregistered dialects whose ops have no side effects (e.g. "
               "mhlo,stablehlo; their collectives, host transfers and custom "
               "calls excepted); other unregistered ops keep their place">,
    LMSAlignmentOption,
    LMSDynamicBytesOption,
    Option<"printStatistics", "stats", "bool", "false",
           "Print each function's peak before and after to stderr">,
  ];
  let statistics = [
    Statistic<"numReordered", "functions-reordered",
              "Number of functions whose ops were reordered">
  ];
}

def LMSSplit : Pass<"lms-split", "ModuleOp"> {
  let summary = "Split the op that sets the smallest feasible budget, with "
                "its neighbours, into loops over slices of a parallel "
                "dimension";
  let description = [{
    No plan that keeps ops whole goes below the bytes of the largest op's
    operands and results plus what stays live across it: the smallest
    feasible budget that `--lms-report-memory` prints. This pass breaks that
    floor the way practitioners do by hand (chunked cross-entropy,
    micro-batched layers): the op that sets it (the anchor) and its
    neighbours that share a parallel dimension of its iteration space (batch,
    tokens) run as a loop over slices of that dimension, so that only one
    slice of the large tensors between them is resident at a time.

    The region grows from the anchor over tensors of at least `min-bytes`
    that carry the dimension: linalg ops (sliced by their TilingInterface
    implementation, upstream's), `tensor.pad` and `tensor.insert_slice`
    where the dimension is not padded and inserted whole,
    `tensor.collapse_shape`/`expand_shape` where it is the outermost of its
    group (tokens = batch x sequence), `tensor.empty` and fills of
    destinations; either every such neighbour, or best first by the bytes
    the loops would hold whole. Which of the anchor's parallel loops, which
    growth and (with `slices=0`) how many slices are chosen by measuring
    the split on a copy of the function with the memory analysis. An op that reduces over the dimension (a weight gradient, a loss
    sum) accumulates across the iterations in a loop-carried value, in the
    unsplit op's order: sums are bit-identical. An op that needs such a
    reduction complete (the gradient of a mean loss needs the count) starts
    a second loop, which computes again the slices it needs of the first
    loop's values. Values used outside the region are assembled whole. A
    tensor read by a linalg body through `tensor.extract` at `linalg.index`
    of the split loop (a label gather) is sliced too. A chain of reshapes
    through a flat shape (torch's `view`, as exporters write it) is
    composed into one reshape where that lets the dimension through: before
    a split of a given count, and otherwise when an anchor cannot be split
    or its loops do not reach the budget as the IR is written.

    ```mlir
    // Before: the logits (tokens x vocabulary) are resident whole.
    %logits = linalg.matmul ins(%h, %w) outs(%init) -> tensor<2048x50257xf32>
    %lse = linalg.generic ... ins(%logits) ...
    // After (slices=8): one slice of 256 tokens at a time.
    %r:2 = scf.for %o = %c0 to %c2048 step %c256 iter_args(...) {
      %hs = tensor.extract_slice %h[%o, 0] [256, 768] [1, 1]
      %ls = linalg.matmul ins(%hs, %w) ... -> tensor<256x50257xf32>
      ...
    }
    ```

    With `slices=N` the anchor is split into N slices (N must divide the
    dimension; an error names the op otherwise, or why it cannot be split).
    With `slices=0` (the default) a function is split only while its
    smallest feasible budget is above its budget (resolved as for
    `--lms-plan`), each time with the fewest slices that bring it within the
    budget (or the most that lower it), for at most `rounds` rounds; where
    the op that sets the floor cannot be split, a warning says why.
  }];
  let options = [
    Option<"slices", "slices", "int64_t", "0",
           "Split the anchor into this many slices (0: as many as the budget "
           "needs)">,
    Option<"budget", "budget", "std::string", "\"\"",
           "Device-memory budget the smallest feasible budget must reach "
           "(bytes with a unit, or a percentage of the peak); wins over "
           "--lms-budget">,
    Option<"device", "device", "std::string", "\"\"",
           "Device preset (default: the module's DLTI spec, else "
           "v100-16g): its capacity is the default budget">,
    Option<"loop", "loop", "int64_t", "-1",
           "The anchor's loop (dimension of its iteration space) to split "
           "(-1: the loop and region whose loops need least, measured)">,
    Option<"minBytes", "min-bytes", "std::string", "\"\"",
           "Smallest tensor (bytes with a unit) that joins a neighbour to "
           "the region (default: a quarter of the anchor's largest tensor)">,
    Option<"rounds", "rounds", "unsigned", "200",
           "Most splits per function with slices=0">,
    Option<"onlineSoftmax", "online-softmax", "bool", "true",
           "Split by the dimension a softmax reduces, compute its sum of "
           "exponentials in the loop of its maximum, rescaled as the "
           "maximum grows (false: a loop after the maximum's, which "
           "computes its slices again; sums bit-identical to the unsplit "
           "op)">,
    LMSAlignmentOption,
    LMSDynamicBytesOption,
    Option<"printStatistics", "stats", "bool", "false",
           "Print each split (anchor, dimension, slices, smallest feasible "
           "budget before and after) to stderr">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::affine::AffineDialect"];
  let statistics = [
    Statistic<"numSplits", "splits", "Number of ops split">
  ];
}

def LMSInlineRecomputes : Pass<"lms-inline-recomputes"> {
  let summary = "Inline lms.recompute regions at their position";
  let description = [{
    Replaces every `lms.recompute` by the ops of its body (its block arguments
    by its inputs, its results by what it yields). Unlike `--lms-strip`, the
    copies are kept: the program still recomputes, it only stops protecting
    the recomputation from CSE. The lowering pipelines run it right before
    bufferization, which has no model for `lms.recompute`.
  }];
}

def LMSUploadConstants : Pass<"lms-upload-constants"> {
  let summary = "Give every use of a host global a device copy made right "
                "before its first use";
  let description = [{
    On bufferized IR, constants and globals (`memref.get_global`, which
    one-shot bufferization makes of `arith.constant` tensors and
    `ml_program` global loads) stay in host memory. This pass gives each
    `memref.get_global` of a block a device copy: a `memref.alloc` filled by
    a `memref.copy` from the global (or by a `linalg.fill` when the global
    is a splat: a splat is refilled on the device, not copied), placed right
    before the first op of the block that uses the global, and every use
    reads the copy. `--lms-deallocate` then frees the copy after its last
    use and `--lms-memref-to-gpu` turns the copy from the global into a
    host-to-device `gpu.memcpy`.

    This is where the memory analyses count a constant: from right before
    its first use through its last use. A constant that a planner drops and
    brings back (an `lms.recompute` holding the constant) is uploaded again
    at its new position.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::memref::MemRefDialect"];
}

def LMSMarkArenaSlots : Pass<"lms-mark-arena-slots", "ModuleOp"> {
  let summary = "Mark the results that go into slots of a caller's arena";
  let description = [{
    On tensor IR, before bufferization, records what the arena model
    ([Arena.md](../Arena.md)) counts in slots of an arena, so that
    `--lms-carve-arena` lowers exactly that:

    - `lms.result_slots` (`array<i1>`, one entry per result) on a function
      whose body allocates a buffer to return it (a result it computes, or
      a copy it returns of a buffer returned twice or of an argument it
      borrows): its frame variant can take that result from a slot of its
      caller's arena instead of allocating it;
    - `lms.slotted` on a call whose results go into slots of the calling
      function's arena: the callee has results to slot, the caller frees
      each of them itself, and the function's need (its arena plus its
      allocations of their own) is smaller so. A slot is held from the
      call's start, so a call whose callee frees its arguments before it
      makes its results can need less without slots.

    `--lms-host-pipeline` and `--lms-gpu-pipeline` run it with `arena=true`
    and the runtime's alignment (256 bytes; the choice depends on the
    placement, so an analysis that predicts the lowering uses the same
    alignment); without the marks the results stay allocations of their
    own. Earlier marks are replaced.

    Example: `@main` frees the result of `@step`, which `@step` computes:

    ```mlir
    func.func @step(%x: tensor<4096xf32>) -> tensor<4096xf32>
        attributes {lms.result_slots = array<i1: true>} {
      ...
    %r = call @step(%x) {lms.slotted} : (tensor<4096xf32>) -> tensor<4096xf32>
    ```
  }];
  let options = [
    LMSAlignmentOption,
    LMSDynamicBytesOption
  ];
}

def LMSMarkArenaArguments : Pass<"lms-mark-arena-arguments", "ModuleOp"> {
  let summary = "Let the host place each entry function's arguments in its "
                "arena";
  let description = [{
    Marks every public function with a body and at least one tensor or
    memref argument that no function of the module calls with
    `lms.arena_arguments` (a driver's `@main` without arguments keeps its
    signature): its host allocates the function's
    arena and places in it the arguments the function owns, at the offsets
    the lowering chooses, as TFLite's arena planner places a model's inputs.
    The function then frees those arguments into its arena at their last
    use, and their bytes serve the buffers it allocates later; without the
    mark they are allocations of their own, held beside an arena allocated
    at entry to the end ([Arena.md](../Arena.md), "Arguments in the
    arena").

    Run it before the planning passes (`--lms-insert-swaps`,
    `--lms-rematerialize`, `--lms-plan`), which then plan against the arena
    that holds the arguments, and before `--lms-host-pipeline` or
    `--lms-gpu-pipeline` with `arena=true`. `--lms-carve-arena` lowers a
    marked function to take its arena as a last argument
    (`memref<Nxi8>`, N in `lms.arena_bytes`), drops the arguments it
    places from the signature, and records their offsets in
    `lms.argument_offsets` (one per argument of the function as written, -1
    for an argument that stays an argument: one it borrows, returns, gives
    to a callee that frees it, or of dynamic shape). The host writes each
    placed argument at its offset before the call; the function's results
    stay allocations of their own. The mark can also be written by hand on
    any function that no function of the module calls.

    Example: `@step` owns `%x` and frees it after its first op:

    ```mlir
    func.func @step(%x: tensor<1024xf32>) -> tensor<1024xf32>
        attributes {lms.arena_arguments} {
    ```

    lowers to

    ```mlir
    func.func @step(%arena: memref<8192xi8>) -> memref<1024xf32>
        attributes {lms.arena_arguments, lms.arena_bytes = 8192 : i64,
                    lms.argument_offsets = array<i64: 0>, ...}
    ```
  }];
}

def LMSDeallocate : Pass<"lms-deallocate", "ModuleOp"> {
  let summary = "Free every buffer right after its last use, as the memory "
                "analysis counts it";
  let description = [{
    On bufferized IR, inserts a `memref.dealloc` after the last use of every
    buffer a function owns, using the same liveness as the memory analyses
    (views keep their buffer alive), so that the device memory a lowered
    program uses is the memory the analyses and planners counted.

    Ownership: a function owns the buffers it allocates (`memref.alloc`,
    `lms.swap_in`, `bufferization.clone`), the results of its calls and its
    memref arguments (a callee may free an argument after its last use, as
    the analyses assume), except the arguments it borrows (`lms.borrowed` in
    its arg_attrs). Returned buffers are not freed (the caller owns them);
    buffers offloaded by `lms.swap_out` are released by the swap's lowering;
    globals and stack buffers are never freed. Buffers allocated inside
    regions are freed there unless yielded.

    Calls pass ownership exactly as the analyses count it, without copies: a
    buffer passed at its last use (itself, not a view, once) goes to the
    callee, which frees it; any other operand is lent, and the caller frees
    it after its own last use. A call that lends an operand is redirected to
    a private copy of its callee, `@<callee>_lms_borrow_<o|b per operand>`,
    whose lent arguments carry `lms.borrowed` (one copy per callee and set of
    lent arguments).

    Run it after one-shot bufferization (with `bufferize-function-boundaries`)
    instead of upstream's buffer deallocation pipeline, which frees buffers at
    the end of their block rather than after their last use.
  }];
}

#endif // LMS_TRANSFORMS_PASSES_TD
