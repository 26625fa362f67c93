//! Benchmarks of the WORKLOADS.md workloads; the workload generators and
//! peers arrive with the benchmark issue.
