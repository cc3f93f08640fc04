//! Range writes and flex reads (paper 004) on a logical-to-physical block map. (In progress.)
