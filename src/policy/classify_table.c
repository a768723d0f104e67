/* classify_table.c: the tables of the shell classifier: the analyser
 * each command name gets, and the names it knows as shells,
 * interpreters, wrappers, network tools, package managers and
 * privileged commands. */
#include "classify.h"

#include <string.h>

/* --- names by family --------------------------------------------- */

/* A shell's name. */
int cls_is_shell(const char *b)
{
	static const char *const shells[] = {
	    "sh",   "bash", "dash", "zsh",  "ksh",   "mksh", "ash",
	    "fish", "csh",  "tcsh", "yash", "rbash", "posh", NULL};
	return cls_in_list(b, shells);
}

/* python, python3, python3.11, pypy, ipython... */
int cls_is_python(const char *b)
{
	if (!strncmp(b, "python", 6)) {
		for (const char *q = b + 6; *q; q++)
			if (!((*q >= '0' && *q <= '9') || *q == '.'))
				return 0;
		return 1;
	}
	return !strcmp(b, "pypy") || !strcmp(b, "pypy3") ||
	       !strcmp(b, "ipython") || !strcmp(b, "ipython3");
}

/* Interpreters whose inline code the policy cannot read. */
static const struct cls_interp INTERPS[] = {
    {"perl", "eE", {NULL}},
    {"perl5", "eE", {NULL}},
    {"ruby", "e", {NULL}},
    {"irb", "", {NULL}},
    {"node", "ep", {"--eval", "--print", NULL}},
    {"nodejs", "ep", {"--eval", "--print", NULL}},
    {"deno", "", {"eval", NULL}},
    {"bun", "e", {"--eval", NULL}},
    {"php", "rR", {NULL}},
    {"lua", "e", {NULL}},
    {"luajit", "e", {NULL}},
    {"Rscript", "e", {NULL}},
    {"R", "e", {NULL}},
    {"julia", "e", {"--eval", NULL}},
    {"tclsh", "", {NULL}},
    {"wish", "", {NULL}},
    {"osascript", "e", {NULL}},
    {"guile", "c", {NULL}},
    {"pwsh", "c", {"-Command", "-EncodedCommand", NULL}},
    {"powershell", "c", {"-Command", "-EncodedCommand", NULL}},
    {"expect", "c", {NULL}},
    {"gdb", "", {"-ex", "--eval-command", NULL}},
};

/* The interpreter named b, or NULL. */
const struct cls_interp *cls_find_interp(const char *b)
{
	for (size_t k = 0; k < sizeof INTERPS / sizeof *INTERPS; k++)
		if (!strcmp(INTERPS[k].name, b))
			return &INTERPS[k];
	return NULL;
}

/* The long options of wrappers that take a value. */
static const char *const SUDO_LONG[] = {
    "--user",       "--group",           "--host", "--prompt",
    "--close-from", "--chdir",           "--role", "--type",
    "--other-user", "--command-timeout", NULL};
static const char *const TIMEOUT_LONG[] = {"--signal", "--kill-after", NULL};
static const char *const XARGS_LONG[] = {
    "--max-args",  "--max-lines", "--max-procs",        "--max-chars",
    "--delimiter", "--arg-file",  "--process-slot-var", NULL};

/* Commands that run the command after their options; some are a reason
 * by themselves. */
static const struct cls_wrapper WRAPPERS[] = {
    {"sudo", "ughpCDrtUT", SUDO_LONG, 0, POLICY_PRIVILEGE,
     "runs a command as another user"},
    {"doas", "uC", NULL, 0, POLICY_PRIVILEGE, "runs a command as another user"},
    {"pkexec", "", NULL, 0, POLICY_PRIVILEGE, "runs a command as another user"},
    {"sg", "", NULL, 1, POLICY_PRIVILEGE, "runs a command in another group"},
    {"chroot", "", NULL, 1, POLICY_PRIVILEGE,
     "runs a command in another root directory"},
    {"nsenter", "tSGw", NULL, 0, POLICY_PRIVILEGE, "enters other namespaces"},
    {"unshare", "", NULL, 0, POLICY_PRIVILEGE, "creates namespaces"},
    {"torsocks", "", NULL, 0, POLICY_NETWORK,
     "sends a command's traffic through Tor"},
    {"proxychains", "f", NULL, 0, POLICY_NETWORK,
     "sends a command's traffic through proxies"},
    {"proxychains4", "f", NULL, 0, POLICY_NETWORK,
     "sends a command's traffic through proxies"},
    {"builtin", "", NULL, 0, -1, NULL},
    {"exec", "a", NULL, 0, -1, NULL},
    {"nohup", "", NULL, 0, -1, NULL},
    {"time", "fo", NULL, 0, -1, NULL},
    {"nice", "n", NULL, 0, -1, NULL},
    {"ionice", "cnp", NULL, 0, -1, NULL},
    {"chrt", "", NULL, 1, -1, NULL},
    {"taskset", "", NULL, 1, -1, NULL},
    {"stdbuf", "ioe", NULL, 0, -1, NULL},
    {"setsid", "", NULL, 0, -1, NULL},
    {"timeout", "sk", TIMEOUT_LONG, 1, -1, NULL},
    {"unbuffer", "", NULL, 0, -1, NULL},
    {"catchsegv", "", NULL, 0, -1, NULL},
    {"strace", "oepsuEIbPXa", NULL, 0, -1, NULL},
    {"ltrace", "oepsuEnaA", NULL, 0, -1, NULL},
    {"fakeroot", "ls", NULL, 0, -1, NULL},
    {"firejail", "", NULL, 0, -1, NULL},
    {"eatmydata", "", NULL, 0, -1, NULL},
    {"nocache", "", NULL, 0, -1, NULL},
    {"xargs", "nLPsdEaI", XARGS_LONG, 0, -1, NULL},
    {"caffeinate", "", NULL, 0, -1, NULL},
    {"valgrind", "", NULL, 0, -1, NULL},
};

/* The wrapper named b, or NULL. */
const struct cls_wrapper *cls_find_wrapper(const char *b)
{
	for (size_t k = 0; k < sizeof WRAPPERS / sizeof *WRAPPERS; k++)
		if (!strcmp(WRAPPERS[k].name, b))
			return &WRAPPERS[k];
	return NULL;
}

/* Commands that talk to hosts on the network. */
static const char *const NET_CMDS[] = {
    "curl",     "wget",     "nc",         "ncat",       "netcat",
    "socat",    "ssh",      "scp",        "sftp",       "ftp",
    "telnet",   "aria2c",   "axel",       "lftp",       "http",
    "https",    "xh",       "dig",        "nslookup",   "host",
    "ping",     "ping6",    "traceroute", "tracepath",  "mtr",
    "whois",    "nmap",     "masscan",    "smbclient",  "rclone",
    "s3cmd",    "aws",      "gsutil",     "gcloud",     "az",
    "kubectl",  "gh",       "yt-dlp",     "youtube-dl", "huggingface-cli",
    "sendmail", "mail",     "mailx",      "mutt",       "ldapsearch",
    "tftp",     "websocat", "wscat",      "npx",        "bunx",
    "pnpx",     "uvx",      "pipx",       "mosh",       "autossh",
    "sshpass",  "ncftp",    "curlie",     "links",      "lynx",
    "w3m",      "httpie",   "grpcurl",    "openvpn",    NULL};
/* Package managers and the subcommands that download. */
static const struct cls_subcmds PKG[] = {
    {"pip", {"install", "download", "wheel", NULL}},
    {"pip3", {"install", "download", "wheel", NULL}},
    {"npm",
     {"install", "i", "ci", "add", "update", "up", "upgrade", "publish", "exec",
      "x", "create", NULL}},
    {"pnpm",
     {"install", "i", "add", "update", "up", "dlx", "publish", "create", NULL}},
    {"yarn", {"install", "add", "upgrade", "dlx", "publish", "create", NULL}},
    {"bun", {"install", "i", "add", "update", "x", "create", NULL}},
    {"apt",
     {"install", "update", "upgrade", "full-upgrade", "source", "download",
      NULL}},
    {"apt-get",
     {"install", "update", "upgrade", "dist-upgrade", "source", "download",
      "build-dep", NULL}},
    {"aptitude", {"install", "update", "upgrade", NULL}},
    {"yum", {"install", "update", "upgrade", "makecache", NULL}},
    {"dnf", {"install", "update", "upgrade", "makecache", "download", NULL}},
    {"apk", {"add", "update", "upgrade", "fetch", NULL}},
    {"brew", {"install", "update", "upgrade", "fetch", "tap", NULL}},
    {"gem", {"install", "update", "fetch", NULL}},
    {"cargo", {"install", "fetch", "update", "publish", "add", NULL}},
    {"go", {"get", "install", "mod", NULL}},
    {"conda", {"install", "create", "update", "upgrade", NULL}},
    {"mamba", {"install", "create", "update", "upgrade", NULL}},
    {"micromamba", {"install", "create", "update", NULL}},
    {"uv", {"pip", "add", "sync", "tool", "run", "lock", NULL}},
    {"poetry", {"install", "add", "update", "lock", NULL}},
    {"pipenv", {"install", "update", "lock", "sync", NULL}},
    {"composer", {"install", "require", "update", NULL}},
    {"bundle", {"install", "update", NULL}},
    {"snap", {"install", "refresh", NULL}},
    {"flatpak", {"install", "update", NULL}},
    {"zypper", {"install", "in", "update", "refresh", NULL}},
    {"pacman", {"-S", "-Sy", "-Syu", "-Syy", NULL}},
    {"docker", {"pull", "push", "login", "search", NULL}},
    {"podman", {"pull", "push", "login", "search", NULL}},
    {"ollama", {"pull", "push", "run", NULL}},
};

/* The package manager named b, or NULL. */
const struct cls_subcmds *cls_find_pkg(const char *b)
{
	for (size_t k = 0; k < sizeof PKG / sizeof *PKG; k++)
		if (!strcmp(PKG[k].name, b))
			return &PKG[k];
	return NULL;
}

/* Commands that need or change privileges. */
static const char *const PRIV_CMDS[] = {
    "mount",    "umount",    "insmod",   "rmmod",    "modprobe", "setcap",
    "iptables", "ip6tables", "nft",      "passwd",   "chpasswd", "useradd",
    "userdel",  "usermod",   "groupadd", "groupdel", "visudo",   "losetup",
    "mknod",    "setpriv",   "capsh",    "swapon",   "swapoff",  "reboot",
    "shutdown", "halt",      "poweroff", "service",  "newgrp",   "sysctl",
    "dmesg",    "chattr",    NULL};

/* --- the analyser of a command ----------------------------------- */

struct handler {
	const char *name;
	cls_handler_fn fn;
};

/* Commands with an analyser of their own, by name. */
static const struct handler HANDLERS[] = {
    {"rm", cls_cmd_rm},
    {"unlink", cls_cmd_rm},
    {"shred", cls_cmd_rm},
    {"srm", cls_cmd_rm},
    {"wipe", cls_cmd_rm},
    {"truncate", cls_cmd_rm},
    {"wipefs", cls_cmd_mkfs},
    {"dd", cls_cmd_dd},
    {"find", cls_cmd_find},
    {"mv", cls_cmd_copy},
    {"cp", cls_cmd_copy},
    {"ln", cls_cmd_copy},
    {"tee", cls_cmd_tee},
    {"sed", cls_cmd_sed},
    {"gsed", cls_cmd_sed},
    {"chmod", cls_cmd_chmod},
    {"chown", cls_cmd_chmod},
    {"chgrp", cls_cmd_chmod},
    {"rsync", cls_cmd_rsync},
    {"git", cls_cmd_git},
    {"kill", cls_cmd_kill},
    {"pkill", cls_cmd_kill},
    {"killall", cls_cmd_kill},
    {"skill", cls_cmd_kill},
    {"xkill", cls_cmd_kill},
    {"killall5", cls_cmd_kill},
    {"systemctl", cls_cmd_systemctl},
    {"crontab", cls_cmd_persist},
    {"at", cls_cmd_persist},
    {"batch", cls_cmd_persist},
    {"update-rc.d", cls_cmd_persist},
    {"chkconfig", cls_cmd_persist},
    {"launchctl", cls_cmd_persist},
    {"eval", cls_cmd_eval},
    {"source", cls_cmd_source},
    {".", cls_cmd_source},
    {"alias", cls_cmd_alias},
    {"shopt", cls_cmd_alias},
    {"enable", cls_cmd_alias},
    {"hash", cls_cmd_alias},
    {"trap", cls_cmd_trap},
    {"cd", cls_cmd_cd},
    {"pushd", cls_cmd_cd},
    {"popd", cls_cmd_cd},
    {"env", cls_cmd_env},
    {"command", cls_cmd_command},
    {"flock", cls_cmd_flock},
    {"su", cls_cmd_su},
    {"runuser", cls_cmd_su},
    {"watch", cls_cmd_watch},
    {"parallel", cls_cmd_parallel},
    {"script", cls_cmd_script},
    {"busybox", cls_cmd_busybox},
    {"awk", cls_cmd_awk},
    {"gawk", cls_cmd_awk},
    {"mawk", cls_cmd_awk},
    {"nawk", cls_cmd_awk},
};

/* The analyser for a command's base name: the table first, then the
 * families of names; NULL for a command with nothing to check. */
cls_handler_fn cls_handler(const char *b)
{
	for (size_t k = 0; k < sizeof HANDLERS / sizeof *HANDLERS; k++)
		if (!strcmp(HANDLERS[k].name, b))
			return HANDLERS[k].fn;
	if (cls_is_shell(b))
		return cls_cmd_shell;
	if (cls_is_python(b))
		return cls_cmd_python;
	if (cls_find_interp(b))
		return cls_cmd_interp;
	if (cls_find_wrapper(b))
		return cls_cmd_wrapper;
	if (cls_in_list(b, NET_CMDS))
		return cls_cmd_net;
	if (cls_find_pkg(b))
		return cls_cmd_pkg;
	if (cls_in_list(b, PRIV_CMDS))
		return cls_cmd_priv;
	if (!strncmp(b, "mkfs", 4))
		return cls_cmd_mkfs;
	return NULL;
}
