/* token.c — see token.h. */
#include "token.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "errmsg.h"

int token__read(const char *path, const char *opt, char *buf, size_t len, char *err,
		size_t errlen)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;
	size_t i;

	if (fd < 0)
		return errmsg(err, errlen, "cannot read %s '%s': %s", opt, path, strerror(errno));
	n = read(fd, buf, len - 1);
	if (n < 0) {
		errmsg(err, errlen, "cannot read %s '%s': %s", opt, path, strerror(errno));
		close(fd);
		return -EIO;
	}
	close(fd);
	buf[n] = '\0';
	for (i = 0; buf[i] && buf[i] != '\n' && !(buf[i] == '\r' && buf[i + 1] == '\n'); i++)
		if (buf[i] <= ' ' || buf[i] >= 0x7f)
			return errmsg(err, errlen, "%s '%s': the token must be printable ASCII without spaces", opt, path);
	if ((size_t)n == len - 1 && !buf[i])
		return errmsg(err, errlen, "%s '%s': token longer than %zu bytes", opt, path, len - 2);
	buf[i] = '\0';
	if (!i)
		return errmsg(err, errlen, "%s '%s': no token on its first line", opt, path);
	return 0;
}
