#ifndef GALLEY_CLIBXML2_SHIM_H
#define GALLEY_CLIBXML2_SHIM_H
#include <libxml/xmlversion.h>
// Debian's libxml2 is built with ICU; its headers then pull in the system ICU, which clashes
// with Foundation's private ICU module. Only two trailing pointer fields of
// xmlCharEncodingHandler depend on it, and Galley never touches that struct.
#undef LIBXML_ICU_ENABLED
#include <libxml/HTMLparser.h>
#include <libxml/HTMLtree.h>
#include <libxml/tree.h>
#include <libxml/xmlerror.h>
#include <libxml/parser.h>
#include <libxml/SAX2.h>
// xmlFree is a global function-pointer variable; Swift 6 will not touch it directly.
static inline void galley_xmlFree(void *p) { xmlFree(p); }
#endif
