// RUN: lms-opt %s -lms-report-memory=format=json -o /dev/null | FileCheck %s --check-prefix=DLTI
// RUN: lms-opt %s -lms-report-memory="format=json device=gh200" -o /dev/null | FileCheck %s --check-prefix=PRESET
// RUN: not lms-opt %s -lms-report-memory=device=tpu-v9 -o /dev/null 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: not lms-opt %s -lms-report-memory=format=xml -o /dev/null 2>&1 | FileCheck %s --check-prefix=FORMAT
// RUN: not lms-opt %s -lms-report-memory=file=/nonexistent/dir/r.json -o /dev/null 2>&1 | FileCheck %s --check-prefix=FILE

// COM: The module's DLTI target spec describes the device: a base preset with
// COM: overrides.
// DLTI: "name": "a100-40g (DLTI)",
// DLTI-NEXT: "capacity_bytes": 1000000,
// DLTI-NEXT: "peak_flops": 19500000000000,
// DLTI-NEXT: "memory_bandwidth": 1555000000000,
// DLTI-NEXT: "h2d_bandwidth": 24000000000,
// DLTI-NEXT: "d2h_bandwidth": 12000000000

// COM: A preset named by the option wins over the spec. Its capacity is
// COM: what a process can use (the driver's 97871 MiB less 1 GiB); the
// COM: card's memory is given beside it.
// PRESET: "name": "gh200",
// PRESET-NEXT: "capacity_bytes": 101551439872,
// PRESET-NEXT: "physical_bytes": 103079215104,
// PRESET: "h2d_bandwidth": 375000000000,
// PRESET-NEXT: "d2h_bandwidth": 297000000000

// UNKNOWN: error: unknown device preset 'tpu-v9'; known presets: v100-16g, v100-32g-nvlink, a100-40g, h100-pcie, h200, gh200
// FORMAT: for the --format option: Cannot find option named 'xml'!
// FILE: error: cannot open report file '/nonexistent/dir/r.json'

module attributes {dlti.target_system_spec = #dlti.target_system_spec<
  "GPU" = #dlti.target_device_spec<
    "lms.preset" = "a100-40g",
    "lms.capacity_bytes" = 1000000 : i64,
    "lms.h2d_bandwidth" = 2.4e10 : f64,
    "lms.d2h_bandwidth" = 1.2e10 : f64>>} {
  func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
    return %a : tensor<4xf32>
  }
}
