// RUN: lms-opt %s -split-input-file -lms-report-memory -verify-diagnostics -o /dev/null

// expected-error@+1 {{unknown key 'lms.flops' in the DLTI target spec}}
module attributes {dlti.target_system_spec = #dlti.target_system_spec<
  "GPU" = #dlti.target_device_spec<"lms.flops" = 1.0 : f64>>} {
}

// -----

// expected-error@+1 {{'lms.h2d_bandwidth' in the DLTI target spec must be a non-negative number}}
module attributes {dlti.target_system_spec = #dlti.target_system_spec<
  "GPU" = #dlti.target_device_spec<"lms.h2d_bandwidth" = "fast">>} {
}

// -----

// expected-error@+1 {{unknown device preset 'p100'}}
module attributes {dlti.target_system_spec = #dlti.target_system_spec<
  "GPU" = #dlti.target_device_spec<"lms.preset" = "p100">>} {
}
