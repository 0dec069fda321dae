// SPDX-License-Identifier: MIT
/*
 * JSON string escaping, shared by libpto's trace and ptotop.  See json.h.
 */
#include "json.h"
#include "utf8.h"

void pto_json_str(FILE *out, const char *s)
{
	size_t len;

	fputc('"', out);
	for (; s && *s; s += len ? len : 1) {
		unsigned char c = (unsigned char)*s;

		len = pto_utf8_len(s);
		if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c < 0x20 || c == 0x7f)
			fprintf(out, "\\u%04x", c);
		else if (len)
			fwrite(s, 1, len, out);
		else	/* a byte that would make the document invalid */
			fputs("\\ufffd", out);
	}
	fputc('"', out);
}
