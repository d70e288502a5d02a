/* SPDX-License-Identifier: MIT */
/*
 * optscan.c - the option scanner of rmio's parser: GNU getopt's behaviour
 * without its global state, so that parsing is re-entrant.
 */
#include <stdbool.h>
#include <string.h>

#include "internal.h"

void rmcmd_scan_opts(int argc, char **argv, const char *optstring,
		      struct optparse *p)
{
	bool only_operands = false;

	p->nopts = p->nops = 0;
	for (int i = 1; i < argc; i++) {
		char *a = argv[i];

		if (only_operands || a[0] != '-' || a[1] == '\0') {
			p->operands[p->nops++] = a;
			continue;
		}
		if (strcmp(a, "--") == 0) {
			only_operands = true;
			continue;
		}
		for (char *q = a + 1; *q; q++) {
			const char *spec = strchr(optstring, *q);
			struct opt *o = &p->opts[p->nopts++];

			memset(o, 0, sizeof(*o));
			if (!spec || *q == ':') {
				o->c = '?';
				o->bad = *q;
			} else if (spec[1] == ':') {
				o->c = *q;
				if (q[1]) {
					o->arg = q + 1;
				} else if (i + 1 < argc) {
					o->arg = argv[++i];
				} else {
					o->c = '?';
					o->bad = *q;
					o->missing = 1;
				}
				if (p->nopts >= RMCMD_MAX_ARGS)
					return;
				break;
			} else {
				o->c = *q;
			}
			if (p->nopts >= RMCMD_MAX_ARGS)
				return;
		}
	}
}

/* Print getopt's complaint about option o of command name. */
