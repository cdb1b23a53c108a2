//! The simulator's stand-ins for other vendor libraries (sim/src/standins: libruntime.so,
//! libhccl.so, libascendalog.so, the fabric-memory allocator in libcann_hixl.so, and the
//! name-only libc_sec.so and libmetadef.so), proved by a C++ program run bare against them.

use std::process::Command;

use testkit::{sim_lib_dir, Program, Run};

#[test]
fn stand_ins_behave_as_the_vendor_libraries() {
    let exe = Program::cxx("standins", &["sim/tests/standins.cpp"])
        .libs(&["runtime", "hccl", "ascendalog", "cann_hixl", "ascendcl"])
        .build();
    let quiet = Run::new(&exe).run();
    quiet.assert_success().assert_stdout_contains("failures=0");
    assert!(!quiet.stdout.contains("standin-log"), "a record was printed without the switch: {}", quiet.dump());

    let printed = Run::new(&exe).env("ASCEND_SLOG_PRINT_TO_STDOUT", "1").run();
    printed.assert_success().assert_stdout_contains("standin-log 42");
    assert!(printed.stderr.contains("[E19999]") && printed.stderr.contains("standin-report x"), "{}", printed.dump());
}

#[test]
fn libraries_linked_by_name_resolve() {
    // programs link -lc_sec (securec) and -lmetadef (ge::AscendString) beside the vendor libraries
    for (lib, symbol) in [("libc_sec.so", "memcpy_s"), ("libmetadef.so", "_ZNK2ge12AscendString9GetStringEv")] {
        let out = Command::new("nm").args(["-D", "--defined-only"]).arg(sim_lib_dir().join(lib)).output().expect("nm");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.lines().any(|l| l.ends_with(&format!(" {symbol}"))), "{lib} lacks {symbol}: {text}");
    }
}
