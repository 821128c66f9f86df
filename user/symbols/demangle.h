/* demangle.h — C++ (Itanium ABI) symbol names made readable.
 *
 * pprof's convention: Function.name is the demangled name, system_name
 * the mangled one. The work is done by libstdc++'s __cxa_demangle (the
 * same demangler c++filt's ABI uses); nothing here parses names itself.
 */
#ifndef PMUBPF_DEMANGLE_H
#define PMUBPF_DEMANGLE_H

/* A malloc'ed demangled copy of a mangled name ("_Z..."), or NULL if
 * name is not mangled or does not demangle (then use it as it is). */
char *demangle(const char *name);

#endif
