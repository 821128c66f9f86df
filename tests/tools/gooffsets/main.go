// gooffsets — what a Go binary's own DWARF and buildinfo say about the
// fields pmubpf's Go-labels reader uses (user/procs/goversion.c keeps a
// table of them per Go version): the test compares the two.
//
// Prints one line: "go1.19.8 m=48 curg=192 labels=360".
package main

import (
	"debug/buildinfo"
	"debug/dwarf"
	"debug/elf"
	"fmt"
	"os"
)

func member(d *dwarf.Data, typ, field string) int64 {
	r := d.Reader()
	for {
		e, err := r.Next()
		if err != nil || e == nil {
			break
		}
		if e.Tag != dwarf.TagStructType || e.Val(dwarf.AttrName) != typ {
			if e.Children && e.Tag != dwarf.TagCompileUnit {
				r.SkipChildren()
			}
			continue
		}
		for {
			c, err := r.Next()
			if err != nil || c == nil || c.Tag == 0 {
				break
			}
			if c.Tag == dwarf.TagMember && c.Val(dwarf.AttrName) == field {
				switch off := c.Val(dwarf.AttrDataMemberLoc).(type) {
				case int64:
					return off
				case uint64:
					return int64(off)
				}
			}
			if c.Children {
				r.SkipChildren()
			}
		}
	}
	fmt.Fprintf(os.Stderr, "gooffsets: %s.%s not in DWARF\n", typ, field)
	os.Exit(1)
	return 0
}

func main() {
	bi, err := buildinfo.ReadFile(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "gooffsets:", err)
		os.Exit(1)
	}
	f, err := elf.Open(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "gooffsets:", err)
		os.Exit(1)
	}
	d, err := f.DWARF()
	if err != nil {
		fmt.Fprintln(os.Stderr, "gooffsets:", err)
		os.Exit(1)
	}
	fmt.Printf("%s m=%d curg=%d labels=%d\n", bi.GoVersion,
		member(d, "runtime.g", "m"), member(d, "runtime.m", "curg"),
		member(d, "runtime.g", "labels"))
}
