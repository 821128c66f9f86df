#!/bin/sh
# The initramfs's init (tools/kernels/initramfs.sh): load the 9p modules,
# mount this machine's root read-only, under an overlay, at /newroot and the results share
# (read-write) under it, then run the command the host left in the share as
# /bin/bash tools/kernels/guest.sh inside the root, and power off.
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
for m in /mods/*.ko; do
	[ -e "$m" ] && insmod "$m"
done
opts=trans=virtio,version=9p2000.L,msize=524288,cache=loose
if ! mount -t 9p -o ro,$opts hostroot /lower; then
	echo "init: cannot mount the host root over 9p" >/dev/console
	echo o >/proc/sysrq-trigger
fi
# Writable as the tests expect (a build, a file in the current
# directory): the host's root read-only under an overlay whose changes
# live in the guest's memory and go with it. Without overlayfs, the
# read-only root itself.
mount -t tmpfs rw /rw
mkdir -p /rw/up /rw/work
overlay=1
if ! mount -t overlay overlay -o lowerdir=/lower,upperdir=/rw/up,workdir=/rw/work /newroot; then
	echo "init: no overlay: the root stays read-only" >/dev/console
	mount --bind /lower /newroot
	overlay=
fi
R=/newroot
mount -t proc proc $R/proc
mount -t sysfs sys $R/sys
mount -t devtmpfs dev $R/dev
mkdir -p $R/dev/pts
mount -t devpts devpts $R/dev/pts 2>/dev/null
mkdir -p $R/dev/shm # POSIX shared memory, as every system has (podman's locks)
mount -t tmpfs -o mode=1777 shm $R/dev/shm 2>/dev/null
# What udev would make: bash's <(...) needs /dev/fd.
ln -sf /proc/self/fd $R/dev/fd
ln -sf /proc/self/fd/0 $R/dev/stdin
ln -sf /proc/self/fd/1 $R/dev/stdout
ln -sf /proc/self/fd/2 $R/dev/stderr
# Over an overlay every place is writable already, and nothing is
# mounted over the tree: the repository (the command's directory) may
# live anywhere, /tmp or /root included (CI's clone). On the read-only
# root alone, the places a recording writes get a tmpfs each.
if [ -z "$overlay" ]; then
	mount -t tmpfs -o mode=1777 tmp $R/tmp
	mount -t tmpfs run $R/run
	mount -t tmpfs vartmp $R/var/tmp
	mount -t tmpfs cache $R/var/cache
	mount -t tmpfs home $R/root
fi
# A root not this machine's (the arm64 guest, tools/kernels/vm.sh): the
# tree the command runs in comes as its own share, at its own path, under
# an overlay of its own.
work=
for a in $(cat /proc/cmdline); do
	case $a in kwork=*) work=${a#kwork=} ;; esac
done
if [ -n "$work" ]; then
	mkdir -p /wlower /rw/wup /rw/wwork $R$work
	if ! mount -t 9p -o ro,$opts work /wlower ||
		! mount -t overlay overlay -o lowerdir=/wlower,upperdir=/rw/wup,workdir=/rw/wwork $R$work; then
		echo "init: cannot mount the work tree $work" >/dev/console
	fi
fi
mount -t tracefs tracefs $R/sys/kernel/tracing 2>/dev/null
mount -t debugfs debugfs $R/sys/kernel/debug 2>/dev/null
mount -t bpf bpf $R/sys/fs/bpf 2>/dev/null
mount -t cgroup2 cgroup2 $R/sys/fs/cgroup 2>/dev/null
mkdir -p $R/run/kout
mount -t 9p -o $opts kout $R/run/kout
chroot $R /bin/bash /run/kout/cmd >/dev/console 2>&1
echo $? >$R/run/kout/rc
umount $R/run/kout
echo o >/proc/sysrq-trigger
sleep 10
