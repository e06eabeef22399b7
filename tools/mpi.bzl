"""Open MPI, when the build machine has it (issue 19's plug-in).

`local_mpi` makes the repository @local_mpi: with Open MPI's development
files at $MXC_MPI_HOME (default /usr/lib/x86_64-linux-gnu/openmpi, where
Debian's libopenmpi-dev puts them; scripts/setup.sh installs it) it links
include/ and lib/ there and defines `mpi` (mpi.h and -lmpi, for the
plug-in libmxc_mpi.so.1 alone: libmxc.so.1 never links MPI); defs.bzl says
HAVE_MPI and MPI_HOME, and MPIRUN, the launcher the tests use. Without
it the MPI targets are replaced by a test that reports the skip
(backends/mpi/BUILD), as the CUDA plug-in does."""

_BUILD = """
package(default_visibility = ["//visibility:public"])

# -isystem (includes): MPI's headers are not held to mxc's warning flags.
cc_library(
    name = "mpi",
    hdrs = glob(["include/*.h"]),
    includes = ["include"],
    linkopts = ["-L%s/lib", "-lmpi"],
)
"""

def _local_mpi_impl(ctx):
    home = ctx.os.environ.get("MXC_MPI_HOME", "/usr/lib/x86_64-linux-gnu/openmpi")
    mpirun = ctx.which("mpirun")
    have = ctx.path(home + "/include/mpi.h").exists and \
           ctx.path(home + "/lib/libmpi.so").exists and mpirun != None
    if have:
        for d in ["include", "lib"]:
            ctx.symlink(home + "/" + d, d)
        ctx.file("BUILD", _BUILD % home)
    else:
        ctx.file("BUILD", "# No Open MPI at %s (or no mpirun).\n" % home)
    ctx.file("defs.bzl", "HAVE_MPI = %s\nMPI_HOME = %r\nMPIRUN = %r\n" %
                         (have, home, str(mpirun) if mpirun else ""))

local_mpi = repository_rule(
    implementation = _local_mpi_impl,
    environ = ["MXC_MPI_HOME", "PATH"],
    local = True,
)
