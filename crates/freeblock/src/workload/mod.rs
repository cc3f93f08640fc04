//! Workloads: synthetic generators and trace readers. (In progress.)
