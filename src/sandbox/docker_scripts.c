/* docker_scripts.c: the bash scripts assay runs inside the container
 * (passed as `bash -c` arguments, nothing is installed in the image).
 *
 * The wrapper runs every command: it sets the per-process limits
 * (address space, CPU time, file size, no core files), runs the
 * command, says so on stderr when the kernel's OOM killer struck, and
 * then kills whatever the command left behind. Every process of an
 * exec carries ASSAY_EXEC=<tag> in its environment; "what the command
 * left behind" is every process marked with its tag, every descendant
 * of one, and every unmarked orphan (a process that cleared its
 * environment and was reparented to the container's init). The same
 * script in kill mode is the second exec that stops a timed-out or
 * cancelled command (there is no API to kill one exec). It only uses
 * bash builtins while it hunts, so it works when fork() does not. */
#include "sandbox/docker_internal.h"

/* $1 = run TAG MEM_MB CPU_S FSIZE_MB CMD... | kill TAG */
const char dk_wrapper_script[] =
    "reap() {\n"
    "  local t=$1 p pid kv m line rest q hit n round\n"
    "  local -A par mark\n"
    "  local -a vict\n"
    "  for round in 1 2 3; do\n"
    "    par=() mark=() vict=()\n"
    "    for p in /proc/[0-9]*; do\n"
    "      pid=${p#/proc/}\n"
    "      { read -r line <\"$p/stat\"; } 2>/dev/null || continue\n"
    "      rest=${line##*) }\n"
    "      set -- $rest\n"
    "      par[$pid]=$2\n"
    "      m=-\n"
    "      { while IFS= read -r -d '' kv; do\n"
    "          case $kv in ASSAY_EXEC=*) m=${kv#ASSAY_EXEC=}; break ;; "
    "esac\n"
    "        done <\"$p/environ\"; } 2>/dev/null\n"
    "      mark[$pid]=$m\n"
    "    done\n"
    "    for pid in \"${!par[@]}\"; do\n"
    "      { [ \"$pid\" = \"$$\" ] || [ \"$pid\" = 1 ]; } && continue\n"
    "      q=$pid hit=0 n=0\n"
    "      while [ -n \"$q\" ] && [ \"$q\" != 0 ] && [ \"$q\" != 1 ] &&"
    " [ $n -lt 64 ]; do\n"
    "        if [ \"$q\" != \"$$\" ] && { [ \"${mark[$q]}\" = \"$t\" ] ||"
    " { [ \"${mark[$q]}\" = - ] && [ \"${par[$q]}\" = 1 ]; }; }; then\n"
    "          hit=1; break\n"
    "        fi\n"
    "        q=${par[$q]} n=$((n + 1))\n"
    "      done\n"
    "      [ $hit = 1 ] && vict+=(\"$pid\")\n"
    "    done\n"
    "    [ ${#vict[@]} = 0 ] && return 0\n"
    "    kill -STOP \"${vict[@]}\" 2>/dev/null\n"
    "    kill -KILL \"${vict[@]}\" 2>/dev/null\n"
    "  done\n"
    "}\n"
    "oomc() {\n"
    "  local f k v\n"
    "  o=\n"
    "  for f in /sys/fs/cgroup/memory/memory.oom_control "
    "/sys/fs/cgroup/memory.events; do\n"
    "    [ -r \"$f\" ] || continue\n"
    "    while read -r k v; do [ \"$k\" = oom_kill ] && o=$v; done <\"$f\"\n"
    "    return 0\n"
    "  done\n"
    "}\n"
    "if [ \"$1\" = kill ]; then reap \"$2\"; exit 0; fi\n"
    "t=$2 mb=$3 cpu=$4 fmb=$5\n"
    "shift 5\n"
    "[ \"$mb\" -gt 0 ] && ulimit -v $((mb * 1024))\n"
    "[ \"$cpu\" -gt 0 ] && { ulimit -t $((cpu + 5)); ulimit -S -t \"$cpu\"; "
    "}\n"
    "[ \"$fmb\" -gt 0 ] && ulimit -f $((fmb * 1024))\n"
    "ulimit -c 0\n"
    "oomc; o0=$o\n"
    "\"$@\"\n"
    "rc=$?\n"
    "oomc\n"
    "if [ \"$rc\" = 137 ] && [ -n \"$o\" ] && [ \"$o\" != \"$o0\" ]; then\n"
    "  echo \"assay: the command was killed by the out-of-memory killer: "
    "the sandbox's processes together reached its memory limit of ${mb} "
    "MB\" >&2\n"
    "fi\n"
    "reap \"$t\"\n"
    "exit $rc\n";

/* File operations, confined to /workspace: paths are resolved inside
 * the container (symlinks and all) and refused when they land outside.
 * Exit 3 with the reason on stderr when refused or missing.
 *   resolve REL          the absolute path REL leads to
 *   read REL MAX         "SIZE\n" then at most MAX bytes
 *   list REL RECURSIVE   "%y %s %T@ %P\0" per entry below REL
 *   prepare REL          mkdir -p the parents; print the directory */
const char dk_fileop_script[] =
    "ws=/workspace\n"
    "inside() { case $1 in \"$ws\"|\"$ws\"/*) return 0 ;; esac; return 1; "
    "}\n"
    "fail() { printf '%s\\n' \"$1\" >&2; exit 3; }\n"
    "out=\"path '$2' leads outside the workspace (through a symlink): "
    "refused\"\n"
    "resolve() {\n"
    "  r=$(realpath -e -- \"$ws/$1\" 2>/dev/null) ||"
    " fail \"$1: No such file or directory\"\n"
    "  inside \"$r\" || fail \"$out\"\n"
    "}\n"
    "case $1 in\n"
    "resolve) resolve \"$2\"; printf '%s' \"$r\" ;;\n"
    "read)\n"
    "  resolve \"$2\"\n"
    "  [ -d \"$r\" ] && fail \"$2 is a directory\"\n"
    "  [ -f \"$r\" ] || fail \"$2 is not a regular file\"\n"
    "  s=$(stat -c %s -- \"$r\") || exit 1\n"
    "  printf '%s\\n' \"$s\"\n"
    "  exec head -c \"$3\" -- \"$r\" ;;\n"
    "list)\n"
    "  resolve \"$2\"\n"
    "  [ -d \"$r\" ] || fail \"$2: Not a directory\"\n"
    "  d=1; [ \"$3\" = 1 ] && d=64\n"
    "  cd -- \"$r\" || exit 1\n"
    "  find . -mindepth 1 -maxdepth \"$d\" -printf '%y %s %T@ %P\\0' "
    "2>/dev/null | head -z -n \"$4\"\n"
    "  exit 0 ;;\n"
    "prepare)\n"
    "  rel=$2 dir=${2%/*}\n"
    "  [ \"$dir\" = \"$rel\" ] && dir=.\n"
    "  a=$dir\n"
    "  while [ ! -e \"$ws/$a\" ] && [ ! -L \"$ws/$a\" ]; do\n"
    "    case $a in */*) a=${a%/*} ;; *) a=. ;; esac\n"
    "  done\n"
    "  resolve \"$a\"\n"
    "  [ -d \"$r\" ] || fail \"$a is not a directory\"\n"
    "  if [ \"$a\" != \"$dir\" ]; then\n"
    "    rest=${dir#\"$a\"/}; [ \"$a\" = . ] && rest=$dir\n"
    "    mkdir -p -- \"$r/$rest\" || exit 1\n"
    "  fi\n"
    "  resolve \"$dir\"\n"
    "  [ -d \"$r/${rel##*/}\" ] && [ ! -L \"$r/${rel##*/}\" ] &&"
    " fail \"$rel is a directory\"\n"
    "  printf '%s' \"$r\" ;;\n"
    "*) fail \"unknown operation $1\" ;;\n"
    "esac\n";
