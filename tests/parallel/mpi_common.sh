# Sourced by the multi-rank tests: `mpirun` with what a CI container needs
# (root, more ranks than cores).
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none  # containers often forbid cross-process memory access
if ! command -v mpirun >/dev/null; then
  echo "mpirun not found: run scripts/install_deps.sh (openmpi-bin)" >&2
  exit 1
fi
# A plain command line (not a function), so `$MPIRUN ... &` gives mpirun's own pid:
# signalling it ends every rank.
MPIRUN="mpirun --oversubscribe --bind-to none"
