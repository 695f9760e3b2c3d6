/* vm_lib_strfmt.c: string.format, with lua5.4's conversions, checks and messages.
 *
 * Each conversion specification is copied into a small C format string, validated against
 * the flags that conversion accepts (as lua5.4 does, so that only specifications the C
 * library handles reach snprintf), and then handed to snprintf. %q and %s are done here. */
#include <math.h>
#include <stdio.h>

#include "vm_lib_pattern.h"

/* Size of a C conversion specification: Lua's MAX_FORMAT. The part between '%' and the
 * conversion letter must stay below FMT_MAXSPEC - 10 characters ("invalid format (too
 * long)"), which leaves room for '%', a length modifier and '\0'. */
#define FMT_MAXSPEC 32
/* Characters a specification may hold before its conversion letter: flags, width, '.' and
 * precision. Which of them are valid depends on the conversion (see check_spec). */
#define FMT_SPANCHARS "-+ #0123456789."

/* Valid flags per conversion, as lua5.4. */
#define FMT_FLAGS_FLOAT "-+ #0"   /* a A e E f g G */
#define FMT_FLAGS_HEX "-#0"       /* o x X */
#define FMT_FLAGS_INT "-+ 0"      /* d i */
#define FMT_FLAGS_UNS "-0"        /* u */
#define FMT_FLAGS_CHAR "-"        /* c p s */

/* ======================================================================
 * Specifications
 * ====================================================================== */

/* Copy the specification at [p] (just after '%') into [form] as "%...c"; returns the
 * position of its conversion character. */
static const char *read_spec(State *S, const char *p, char *form) {
    size_t len = strspn(p, FMT_SPANCHARS) + 1;   /* with the conversion character */
    if (len >= FMT_MAXSPEC - 10) vm_error(S, "invalid format (too long)");
    form[0] = '%';
    memcpy(form + 1, p, len);
    form[len + 1] = '\0';
    return p + len - 1;
}

/* At most two digits (widths and precisions are 0..99). */
static const char *skip_2digits(const char *s) {
    if (vm_ch_isdigit((unsigned char)*s)) {
        s++;
        if (vm_ch_isdigit((unsigned char)*s)) s++;
    }
    return s;
}

/* Check [form] against the [flags] of its conversion, a width of at most two digits and,
 * when [precision] is allowed, a precision of at most two digits. */
static void check_spec(State *S, const char *form, const char *flags, bool precision) {
    const char *spec = form + 1;
    spec += strspn(spec, flags);
    if (*spec != '0') {   /* a '0' here is a flag this conversion does not take */
        spec = skip_2digits(spec);
        if (*spec == '.' && precision) spec = skip_2digits(spec + 1);
    }
    if (!vm_ch_isalpha((unsigned char)*spec))
        vm_error(S, "invalid conversion specification: '%s'", form);
}

/* Insert the length modifier for 64-bit integers before the conversion character. */
static void add_int_modifier(char *form) {
    size_t l = strlen(form);
    char conv = form[l - 1];
    form[l - 1] = 'l';
    form[l] = 'l';
    form[l + 1] = conv;
    form[l + 2] = '\0';
}

/* snprintf straight into the buffer. */
static void add_printf(StrBuf *B, const char *form, ...) {
    va_list ap, ap2;
    va_start(ap, form);
    va_copy(ap2, ap);
    size_t room = B->cap - B->n;
    int n = vsnprintf(B->b + B->n, room, form, ap);
    va_end(ap);
    if (n < 0) {
        va_end(ap2);
        vm_error(B->S, "invalid conversion '%s' to 'format'", form);
    }
    if ((size_t)n >= room) {
        vm_strbuf_reserve(B, (size_t)n + 1);
        vsnprintf(B->b + B->n, (size_t)n + 1, form, ap2);
    }
    va_end(ap2);
    B->n += (size_t)n;
}

/* ======================================================================
 * %q
 * ====================================================================== */

static void add_quoted(StrBuf *B, const String *s) {
    vm_strbuf_addchar(B, '"');
    for (size_t i = 0; i < s->len; i++) {
        int c = (unsigned char)s->data[i];
        if (c == '"' || c == '\\' || c == '\n') {
            vm_strbuf_addchar(B, '\\');
            vm_strbuf_addchar(B, (char)c);
        } else if (vm_ch_iscntrl(c)) {
            /* the 3-digit form keeps a following digit from joining the escape */
            bool digit_next = i + 1 < s->len && vm_ch_isdigit((unsigned char)s->data[i + 1]);
            add_printf(B, digit_next ? "\\%03d" : "\\%d", c);
        } else {
            vm_strbuf_addchar(B, (char)c);
        }
    }
    vm_strbuf_addchar(B, '"');
}

/* A float that reads back exactly: hexadecimal, with inf and nan spelled as expressions. */
static void add_quoted_float(StrBuf *B, vm_Number n) {
    if (n == HUGE_VAL)
        vm_strbuf_addlstr(B, "1e9999", 6);
    else if (n == -HUGE_VAL)
        vm_strbuf_addlstr(B, "-1e9999", 7);
    else if (n != n)
        vm_strbuf_addlstr(B, "(0/0)", 5);
    else
        add_printf(B, "%a", n);
}

static void add_literal(State *S, StrBuf *B, int arg) {
    Value *v = vm_at(S, arg);
    switch (v->tt) {
    case VT_STR: add_quoted(B, v->u.s); break;
    case VT_INT:
        if (v->u.i == VM_MININTEGER)   /* "-9223372036854775808" would read back as a float */
            vm_strbuf_addlstr(B, "0x8000000000000000", 18);
        else
            add_printf(B, "%lld", (long long)v->u.i);
        break;
    case VT_FLOAT: add_quoted_float(B, v->u.n); break;
    case VT_NIL: vm_strbuf_addlstr(B, "nil", 3); break;
    case VT_TRUE: vm_strbuf_addlstr(B, "true", 4); break;
    case VT_FALSE: vm_strbuf_addlstr(B, "false", 5); break;
    default: vm_arg_error(S, arg, "value has no literal form");
    }
}

/* ======================================================================
 * %s and %p
 * ====================================================================== */

static void add_string(State *S, StrBuf *B, int arg, char *form) {
    String *s = vm_tostring(S, vm_at(S, arg));
    if (form[2] == '\0') {   /* plain "%s": the whole string, zeros included */
        vm_strbuf_addlstr(B, s->data, s->len);
        return;
    }
    if (strlen(s->data) != s->len) vm_arg_error(S, arg, "string contains zeros");
    check_spec(S, form, FMT_FLAGS_CHAR, true);
    if (strchr(form, '.') == NULL && s->len >= 100)
        vm_strbuf_addlstr(B, s->data, s->len);   /* a width cannot matter: keep it whole */
    else
        add_printf(B, form, s->data);
}

static void add_pointer(State *S, StrBuf *B, int arg, char *form) {
    check_spec(S, form, FMT_FLAGS_CHAR, false);
    const Value *v = vm_at(S, arg);
    if (vm_iscollectable(v) || v->tt == VT_LIGHTUD) {
        add_printf(B, form, v->u.p);
    } else {
        form[strlen(form) - 1] = 's';
        add_printf(B, form, "(null)");
    }
}

/* ======================================================================
 * string.format
 * ====================================================================== */

/* One conversion [form] (ending in the conversion letter) of argument [arg]. */
static void add_conversion(State *S, StrBuf *B, int arg, char *form) {
    char conv = form[strlen(form) - 1];
    const char *flags;
    switch (conv) {
    case 'c':
        check_spec(S, form, FMT_FLAGS_CHAR, false);
        add_printf(B, form, (int)vm_check_integer(S, arg));
        return;
    case 'd': case 'i': flags = FMT_FLAGS_INT; goto integer;
    case 'u': flags = FMT_FLAGS_UNS; goto integer;
    case 'o': case 'x': case 'X': flags = FMT_FLAGS_HEX; goto integer;
    integer: {
        vm_Integer n = vm_check_integer(S, arg);
        if (conv == 'd' && form[2] == '\0') {   /* plain "%d": tostring's digits, no snprintf */
            char buf[VM_NUMBUF];
            Value v = vm_int(n);
            vm_strbuf_addlstr(B, buf, (size_t)vm_number2str(&v, buf));
            return;
        }
        check_spec(S, form, flags, true);
        add_int_modifier(form);
        add_printf(B, form, (long long)n);
        return;
    }
    case 'a': case 'A':
        check_spec(S, form, FMT_FLAGS_FLOAT, true);
        add_printf(B, form, vm_check_number(S, arg));
        return;
    case 'e': case 'E': case 'f': case 'g': case 'G': {
        vm_Number n = vm_check_number(S, arg);
        check_spec(S, form, FMT_FLAGS_FLOAT, true);
        add_printf(B, form, n);
        return;
    }
    case 'p': add_pointer(S, B, arg, form); return;
    case 'q':
        if (form[2] != '\0') vm_error(S, "specifier '%%q' cannot have modifiers");
        add_literal(S, B, arg);
        return;
    case 's': add_string(S, B, arg, form); return;
    default: vm_error(S, "invalid conversion '%s' to 'format'", form);
    }
}

int vm_str_format(State *S) {
    String *fmt = vm_check_string(S, 1);
    int top = vm_gettop(S);
    int arg = 1;
    const char *p = fmt->data, *end = fmt->data + fmt->len;
    StrBuf B;
    vm_strbuf_init(S, &B);
    while (p < end) {
        const char *q = memchr(p, '%', (size_t)(end - p));
        if (q == NULL) {
            vm_strbuf_addlstr(&B, p, (size_t)(end - p));
            break;
        }
        vm_strbuf_addlstr(&B, p, (size_t)(q - p));
        p = q + 1;   /* *p may be fmt's terminating '\0' */
        if (*p == '%' && p < end) {
            vm_strbuf_addchar(&B, '%');
            p++;
            continue;
        }
        if (++arg > top) vm_arg_error(S, arg, "no value");
        char form[FMT_MAXSPEC];
        p = read_spec(S, p, form) + 1;
        add_conversion(S, &B, arg, form);
    }
    vm_strbuf_push(&B);
    return 1;
}
