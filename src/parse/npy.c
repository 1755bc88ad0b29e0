/* npy.c - read NeMo's packed-sequence .npy files (an object array of dicts) and
 * measure N_tok and sum s_i^2 per pack, for the fine-tuning FLOPs.
 *
 * The .npy header is parsed for its descr and shape; the payload of an object
 * array is a pickle, interpreted here by a small stack machine that knows the
 * opcodes numpy's pickle.dump (protocol 3; 2, 4 and 5 too) emits for lists,
 * dicts, ints, bools, strings and the ndarray reconstruction.  Every read is
 * bounds-checked, memory is bounded (long integer lists keep only a count),
 * and nothing read is ever called: globals are just names.
 */
#include "nemoperf/parse/npy.h"
#include "nemoperf/util/fileio.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum npy_kind { PK_MARK, PK_NONE, PK_BOOL, PK_INT, PK_FLOAT, PK_STR, PK_LIST, PK_TUPLE, PK_DICT, PK_GLOBAL, PK_OBJ };

struct npy_obj;

struct npy_val {
    enum npy_kind kind;
    int64_t i;
    struct npy_obj *o; /* PK_STR ... PK_OBJ */
};

/* One heap object; all of them are chained for the final free. */
struct npy_obj {
    enum npy_kind kind;
    struct npy_obj *next_alloc;
    char *s;                 /* PK_STR, PK_GLOBAL ("module.name") */
    size_t slen;
    struct npy_val *items;   /* PK_LIST, PK_TUPLE; PK_DICT as key,value pairs */
    size_t n, cap;           /* items held (pairs count 2) */
    size_t count;            /* PK_LIST: elements appended, held or not */
    int dropped;             /* PK_LIST: scalar items were dropped (only count kept) */
    struct npy_val callable, args, state; /* PK_OBJ: REDUCE/NEWOBJ + BUILD */
};

/* A list of scalars keeps its items up to this many; beyond, only the count. */
#define NPY_LIST_KEEP 65536
#define NPY_STACK_MAX (1u << 22)
#define NPY_MEMO_MAX (1u << 24)

struct npy_vm {
    const unsigned char *p, *end, *base;
    const char *name;
    size_t header_len; /* offsets in messages are from the start of the file */
    struct npy_val *stack;
    size_t sp, scap;
    size_t *marks;
    size_t nmarks, mcap;
    struct npy_val *memo;
    size_t memo_n;   /* slots allocated */
    size_t memo_len; /* slots stored (Python's len(memo), which MEMOIZE uses) */
    struct npy_obj *objs;
    struct np_error *err;
};

static enum np_status npy_fail(struct npy_vm *vm, enum np_status st, const char *what)
{
    size_t off = (size_t)(vm->p - vm->base);
    return np_error_set(vm->err, st, vm->name, 0, (int)(off < 0x7fffffff ? off + 1 : 0x7fffffff), "%s", what);
}

static struct npy_obj *npy_new(struct npy_vm *vm, enum npy_kind kind)
{
    struct npy_obj *o = calloc(1, sizeof *o);
    if (!o)
        return NULL;
    o->kind = kind;
    o->next_alloc = vm->objs;
    vm->objs = o;
    return o;
}

static void npy_free_all(struct npy_vm *vm)
{
    for (struct npy_obj *o = vm->objs, *nx; o; o = nx) {
        nx = o->next_alloc;
        free(o->s);
        free(o->items);
        free(o);
    }
    vm->objs = NULL;
    free(vm->stack);
    free(vm->marks);
    free(vm->memo);
}

static int npy_push(struct npy_vm *vm, struct npy_val v)
{
    if (vm->sp == vm->scap) {
        if (vm->scap >= NPY_STACK_MAX)
            return 0;
        size_t nc = vm->scap ? vm->scap * 2 : 256;
        struct npy_val *ns = realloc(vm->stack, nc * sizeof *ns);
        if (!ns)
            return 0;
        vm->stack = ns;
        vm->scap = nc;
    }
    vm->stack[vm->sp++] = v;
    return 1;
}

static int npy_items_add(struct npy_obj *o, struct npy_val v)
{
    if (o->n == o->cap) {
        size_t nc = o->cap ? o->cap * 2 : 8;
        struct npy_val *ni = realloc(o->items, nc * sizeof *ni);
        if (!ni)
            return 0;
        o->items = ni;
        o->cap = nc;
    }
    o->items[o->n++] = v;
    return 1;
}

static int npy_is_scalar(const struct npy_val *v)
{
    return v->kind == PK_INT || v->kind == PK_BOOL || v->kind == PK_NONE || v->kind == PK_FLOAT;
}

/* Append to a list: scalars beyond NPY_LIST_KEEP are only counted. */
static int npy_list_append(struct npy_obj *l, struct npy_val v)
{
    l->count++;
    if (l->dropped)
        return 1;
    if (l->n >= NPY_LIST_KEEP && npy_is_scalar(&v)) {
        int all_scalar = 1;
        for (size_t i = 0; i < l->n && all_scalar; i++)
            all_scalar = npy_is_scalar(&l->items[i]);
        if (all_scalar) {
            free(l->items);
            l->items = NULL;
            l->n = l->cap = 0;
            l->dropped = 1;
            return 1;
        }
    }
    return npy_items_add(l, v);
}

static int npy_str_is(const struct npy_val *v, const char *s)
{
    return v->kind == PK_STR && v->o->slen == strlen(s) && memcmp(v->o->s, s, v->o->slen) == 0;
}

/* Dict store; the integer lists that are not seq_start_id keep only their count
 * from here on, so memory stays bounded by the pack count. */
static int npy_dict_set(struct npy_obj *d, struct npy_val k, struct npy_val v)
{
    if (v.kind == PK_LIST && !npy_str_is(&k, "seq_start_id") && v.o->n > 0) {
        int all_scalar = 1;
        for (size_t i = 0; i < v.o->n && all_scalar; i++)
            all_scalar = npy_is_scalar(&v.o->items[i]);
        if (all_scalar) {
            free(v.o->items);
            v.o->items = NULL;
            v.o->n = v.o->cap = 0;
            v.o->dropped = 1;
        }
    }
    return npy_items_add(d, k) && npy_items_add(d, v);
}

static int npy_need(struct npy_vm *vm, size_t n) { return (size_t)(vm->end - vm->p) >= n; }

static uint64_t npy_le(const unsigned char *p, size_t n)
{
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

static enum np_status npy_pop_mark(struct npy_vm *vm, size_t *from)
{
    if (vm->nmarks == 0)
        return npy_fail(vm, NP_E_INVALID, "pickle: no MARK for a mark-based opcode");
    *from = vm->marks[--vm->nmarks];
    if (*from > vm->sp)
        return npy_fail(vm, NP_E_INVALID, "pickle: stack shorter than its MARK");
    return NP_OK;
}

static enum np_status npy_string(struct npy_vm *vm, size_t lenbytes, enum npy_kind kind)
{
    if (!npy_need(vm, lenbytes))
        return npy_fail(vm, NP_E_INVALID, "pickle: truncated string length");
    uint64_t n = npy_le(vm->p, lenbytes);
    vm->p += lenbytes;
    if (!npy_need(vm, n) || n > (1u << 30))
        return npy_fail(vm, NP_E_INVALID, "pickle: string runs past the end of the file");
    struct npy_obj *o = npy_new(vm, kind);
    if (!o || !(o->s = malloc(n + 1)))
        return npy_fail(vm, NP_E_NOMEM, "out of memory");
    memcpy(o->s, vm->p, n);
    o->s[n] = '\0';
    o->slen = n;
    vm->p += n;
    return npy_push(vm, (struct npy_val){.kind = PK_STR, .o = o}) ? NP_OK
                                                                 : npy_fail(vm, NP_E_NOMEM, "pickle: stack too deep");
}

static enum np_status npy_global(struct npy_vm *vm, const char *mod, size_t ml, const char *nm, size_t nl)
{
    struct npy_obj *o = npy_new(vm, PK_GLOBAL);
    if (!o || !(o->s = malloc(ml + nl + 2)))
        return npy_fail(vm, NP_E_NOMEM, "out of memory");
    memcpy(o->s, mod, ml);
    o->s[ml] = '.';
    memcpy(o->s + ml + 1, nm, nl);
    o->s[ml + nl + 1] = '\0';
    o->slen = ml + nl + 1;
    return npy_push(vm, (struct npy_val){.kind = PK_GLOBAL, .o = o}) ? NP_OK : npy_fail(vm, NP_E_NOMEM, "out of memory");
}

static enum np_status npy_memo_put(struct npy_vm *vm, uint64_t idx)
{
    if (vm->sp == 0)
        return npy_fail(vm, NP_E_INVALID, "pickle: memo store from an empty stack");
    if (idx >= NPY_MEMO_MAX)
        return npy_fail(vm, NP_E_INVALID, "pickle: memo index out of range");
    if (idx >= vm->memo_n) {
        size_t nn = idx + 1 > vm->memo_n * 2 ? idx + 1 : vm->memo_n * 2;
        struct npy_val *nm = realloc(vm->memo, nn * sizeof *nm);
        if (!nm)
            return npy_fail(vm, NP_E_NOMEM, "out of memory");
        for (size_t i = vm->memo_n; i < nn; i++)
            nm[i] = (struct npy_val){.kind = PK_MARK};
        vm->memo = nm;
        vm->memo_n = nn;
    }
    if (vm->memo[idx].kind == PK_MARK)
        vm->memo_len++;
    vm->memo[idx] = vm->stack[vm->sp - 1];
    return NP_OK;
}

static enum np_status npy_memo_get(struct npy_vm *vm, uint64_t idx)
{
    if (idx >= vm->memo_n || vm->memo[idx].kind == PK_MARK)
        return npy_fail(vm, NP_E_INVALID, "pickle: memo index never stored");
    return npy_push(vm, vm->memo[idx]) ? NP_OK : npy_fail(vm, NP_E_NOMEM, "pickle: stack too deep");
}

/* Build a tuple from stack[from..sp) and push it in their place. */
static enum np_status npy_tuple(struct npy_vm *vm, size_t from)
{
    struct npy_obj *o = npy_new(vm, PK_TUPLE);
    if (!o)
        return npy_fail(vm, NP_E_NOMEM, "out of memory");
    for (size_t i = from; i < vm->sp; i++)
        if (!npy_items_add(o, vm->stack[i]))
            return npy_fail(vm, NP_E_NOMEM, "out of memory");
    vm->sp = from;
    return npy_push(vm, (struct npy_val){.kind = PK_TUPLE, .o = o}) ? NP_OK : npy_fail(vm, NP_E_NOMEM, "out of memory");
}

/* Run the pickle at vm->p; the result is left as the only stack value. */
static enum np_status npy_run(struct npy_vm *vm, struct npy_val *result)
{
    enum np_status st = NP_OK;
    while (st == NP_OK) {
        if (!npy_need(vm, 1))
            return npy_fail(vm, NP_E_INVALID, "pickle: ends without STOP (file truncated?)");
        unsigned op = *vm->p++;
        struct npy_val v = {.kind = PK_NONE};
        size_t from;
        switch (op) {
        case 0x80: /* PROTO */
            if (!npy_need(vm, 1))
                return npy_fail(vm, NP_E_INVALID, "pickle: truncated PROTO");
            if (*vm->p < 2 || *vm->p > 5)
                return npy_fail(vm, NP_E_INVALID, "pickle: protocol other than 2-5");
            vm->p++;
            break;
        case 0x95: /* FRAME */
            if (!npy_need(vm, 8))
                return npy_fail(vm, NP_E_INVALID, "pickle: truncated FRAME");
            vm->p += 8;
            break;
        case '.': /* STOP */
            if (vm->sp != 1)
                return npy_fail(vm, NP_E_INVALID, "pickle: STOP with other than one value on the stack");
            *result = vm->stack[0];
            return NP_OK;
        case '(': /* MARK */
            if (vm->nmarks == vm->mcap) {
                if (vm->mcap >= NPY_STACK_MAX)
                    return npy_fail(vm, NP_E_INVALID, "pickle: too many nested MARKs");
                size_t nc = vm->mcap ? vm->mcap * 2 : 64;
                size_t *nm = realloc(vm->marks, nc * sizeof *nm);
                if (!nm)
                    return npy_fail(vm, NP_E_NOMEM, "out of memory");
                vm->marks = nm;
                vm->mcap = nc;
            }
            vm->marks[vm->nmarks++] = vm->sp;
            break;
        case '0': /* POP */
            if (vm->sp == 0)
                return npy_fail(vm, NP_E_INVALID, "pickle: POP from an empty stack");
            vm->sp--;
            break;
        case '1': /* POP_MARK */
            if ((st = npy_pop_mark(vm, &from)) == NP_OK)
                vm->sp = from;
            break;
        case '2': /* DUP */
            if (vm->sp == 0)
                return npy_fail(vm, NP_E_INVALID, "pickle: DUP of an empty stack");
            if (!npy_push(vm, vm->stack[vm->sp - 1]))
                return npy_fail(vm, NP_E_NOMEM, "pickle: stack too deep");
            break;
        case 'N':
        case 0x88:
        case 0x89:
            v.kind = op == 'N' ? PK_NONE : PK_BOOL;
            v.i = op == 0x88;
            if (!npy_push(vm, v))
                return npy_fail(vm, NP_E_NOMEM, "pickle: stack too deep");
            break;
        case 'J': /* BININT */
        case 'K': /* BININT1 */
        case 'M': /* BININT2 */ {
            size_t n = op == 'J' ? 4 : op == 'K' ? 1 : 2;
            if (!npy_need(vm, n))
                return npy_fail(vm, NP_E_INVALID, "pickle: truncated integer");
            uint64_t u = npy_le(vm->p, n);
            vm->p += n;
            v.kind = PK_INT;
            v.i = op == 'J' ? (int64_t)(int32_t)(uint32_t)u : (int64_t)u;
            if (!npy_push(vm, v))
                return npy_fail(vm, NP_E_NOMEM, "pickle: stack too deep");
            break;
        }
        case 0x8a: /* LONG1 */ {
            if (!npy_need(vm, 1))
                return npy_fail(vm, NP_E_INVALID, "pickle: truncated LONG1");
            size_t n = *vm->p++;
            if (n > 8)
                return npy_fail(vm, NP_E_INVALID, "pickle: integer wider than 64 bits");
            if (!npy_need(vm, n))
                return npy_fail(vm, NP_E_INVALID, "pickle: truncated LONG1");
            uint64_t u = npy_le(vm->p, n);
            if (n > 0 && n < 8 && (vm->p[n - 1] & 0x80))
                u |= ~(uint64_t)0 << (8 * n); /* sign-extend */
            vm->p += n;
            v.kind = PK_INT;
            v.i = (int64_t)u;
            if (!npy_push(vm, v))
                return npy_fail(vm, NP_E_NOMEM, "pickle: stack too deep");
            break;
        }
        case 'G': /* BINFLOAT: value unused, kept as a scalar */
            if (!npy_need(vm, 8))
                return npy_fail(vm, NP_E_INVALID, "pickle: truncated float");
            vm->p += 8;
            v.kind = PK_FLOAT;
            if (!npy_push(vm, v))
                return npy_fail(vm, NP_E_NOMEM, "pickle: stack too deep");
            break;
        case 0x8c: /* SHORT_BINUNICODE */
        case 'C':  /* SHORT_BINBYTES */
        case 'U':  /* SHORT_BINSTRING */
            st = npy_string(vm, 1, PK_STR);
            break;
        case 'X': /* BINUNICODE */
        case 'B': /* BINBYTES */
        case 'T': /* BINSTRING */
            st = npy_string(vm, 4, PK_STR);
            break;
        case 0x8d: /* BINUNICODE8 */
        case 0x8e: /* BINBYTES8 */
            st = npy_string(vm, 8, PK_STR);
            break;
        case ']': /* EMPTY_LIST */
        case ')': /* EMPTY_TUPLE */
        case '}': /* EMPTY_DICT */ {
            enum npy_kind k = op == ']' ? PK_LIST : op == ')' ? PK_TUPLE : PK_DICT;
            struct npy_obj *o = npy_new(vm, k);
            if (!o || !npy_push(vm, (struct npy_val){.kind = k, .o = o}))
                return npy_fail(vm, NP_E_NOMEM, "out of memory");
            break;
        }
        case 'a': /* APPEND */
        case 'e': /* APPENDS */ {
            if (op == 'a') {
                if (vm->sp < 1)
                    return npy_fail(vm, NP_E_INVALID, "pickle: APPEND without a value");
                from = vm->sp - 1;
            } else if ((st = npy_pop_mark(vm, &from)) != NP_OK) {
                break;
            }
            if (from == 0 || vm->stack[from - 1].kind != PK_LIST)
                return npy_fail(vm, NP_E_INVALID, "pickle: APPEND(S) to something that is not a list");
            struct npy_obj *l = vm->stack[from - 1].o;
            for (size_t i = from; i < vm->sp; i++)
                if (!npy_list_append(l, vm->stack[i]))
                    return npy_fail(vm, NP_E_NOMEM, "out of memory");
            vm->sp = from;
            break;
        }
        case 'l': /* LIST */ {
            if ((st = npy_pop_mark(vm, &from)) != NP_OK)
                break;
            struct npy_obj *l = npy_new(vm, PK_LIST);
            if (!l)
                return npy_fail(vm, NP_E_NOMEM, "out of memory");
            for (size_t i = from; i < vm->sp; i++)
                if (!npy_list_append(l, vm->stack[i]))
                    return npy_fail(vm, NP_E_NOMEM, "out of memory");
            vm->sp = from;
            if (!npy_push(vm, (struct npy_val){.kind = PK_LIST, .o = l}))
                return npy_fail(vm, NP_E_NOMEM, "out of memory");
            break;
        }
        case 't': /* TUPLE */
            if ((st = npy_pop_mark(vm, &from)) == NP_OK)
                st = npy_tuple(vm, from);
            break;
        case 0x85: /* TUPLE1..3 */
        case 0x86:
        case 0x87: {
            size_t n = op - 0x84;
            if (vm->sp < n)
                return npy_fail(vm, NP_E_INVALID, "pickle: TUPLEn with too few values");
            st = npy_tuple(vm, vm->sp - n);
            break;
        }
        case 's': /* SETITEM */
        case 'u': /* SETITEMS */
        case 'd': /* DICT */ {
            if (op == 's') {
                if (vm->sp < 2)
                    return npy_fail(vm, NP_E_INVALID, "pickle: SETITEM without key and value");
                from = vm->sp - 2;
            } else if ((st = npy_pop_mark(vm, &from)) != NP_OK) {
                break;
            }
            if ((vm->sp - from) % 2)
                return npy_fail(vm, NP_E_INVALID, "pickle: odd number of dict items");
            struct npy_obj *d;
            if (op == 'd') {
                if (!(d = npy_new(vm, PK_DICT)))
                    return npy_fail(vm, NP_E_NOMEM, "out of memory");
            } else {
                if (from == 0 || vm->stack[from - 1].kind != PK_DICT)
                    return npy_fail(vm, NP_E_INVALID, "pickle: SETITEM(S) on something that is not a dict");
                d = vm->stack[from - 1].o;
            }
            for (size_t i = from; i < vm->sp; i += 2)
                if (!npy_dict_set(d, vm->stack[i], vm->stack[i + 1]))
                    return npy_fail(vm, NP_E_NOMEM, "out of memory");
            vm->sp = from;
            if (op == 'd' && !npy_push(vm, (struct npy_val){.kind = PK_DICT, .o = d}))
                return npy_fail(vm, NP_E_NOMEM, "out of memory");
            break;
        }
        case 'c': /* GLOBAL "module\nname\n" */ {
            const unsigned char *m = vm->p, *nl1 = memchr(m, '\n', (size_t)(vm->end - m));
            const unsigned char *nl2 = nl1 ? memchr(nl1 + 1, '\n', (size_t)(vm->end - nl1 - 1)) : NULL;
            if (!nl2)
                return npy_fail(vm, NP_E_INVALID, "pickle: truncated GLOBAL");
            vm->p = nl2 + 1;
            st = npy_global(vm, (const char *)m, (size_t)(nl1 - m), (const char *)nl1 + 1, (size_t)(nl2 - nl1 - 1));
            break;
        }
        case 0x93: /* STACK_GLOBAL */ {
            if (vm->sp < 2 || vm->stack[vm->sp - 1].kind != PK_STR || vm->stack[vm->sp - 2].kind != PK_STR)
                return npy_fail(vm, NP_E_INVALID, "pickle: STACK_GLOBAL needs two strings");
            struct npy_obj *m = vm->stack[vm->sp - 2].o, *n = vm->stack[vm->sp - 1].o;
            vm->sp -= 2;
            st = npy_global(vm, m->s, m->slen, n->s, n->slen);
            break;
        }
        case 'R':  /* REDUCE: callable args */
        case 0x81: /* NEWOBJ: cls args */ {
            if (vm->sp < 2)
                return npy_fail(vm, NP_E_INVALID, "pickle: REDUCE/NEWOBJ with too few values");
            struct npy_obj *o = npy_new(vm, PK_OBJ);
            if (!o)
                return npy_fail(vm, NP_E_NOMEM, "out of memory");
            o->callable = vm->stack[vm->sp - 2];
            o->args = vm->stack[vm->sp - 1];
            o->state.kind = PK_NONE;
            vm->sp -= 2;
            if (!npy_push(vm, (struct npy_val){.kind = PK_OBJ, .o = o}))
                return npy_fail(vm, NP_E_NOMEM, "out of memory");
            break;
        }
        case 'b': /* BUILD */
            if (vm->sp < 2 || vm->stack[vm->sp - 2].kind != PK_OBJ)
                return npy_fail(vm, NP_E_INVALID, "pickle: BUILD on something that is not an object");
            vm->stack[vm->sp - 2].o->state = vm->stack[vm->sp - 1];
            vm->sp--;
            break;
        case 'q': /* BINPUT */
        case 'r': /* LONG_BINPUT */
        case 'h': /* BINGET */
        case 'j': /* LONG_BINGET */ {
            size_t n = (op == 'q' || op == 'h') ? 1 : 4;
            if (!npy_need(vm, n))
                return npy_fail(vm, NP_E_INVALID, "pickle: truncated memo index");
            uint64_t idx = npy_le(vm->p, n);
            vm->p += n;
            st = (op == 'q' || op == 'r') ? npy_memo_put(vm, idx) : npy_memo_get(vm, idx);
            break;
        }
        case 0x94: /* MEMOIZE */
            st = npy_memo_put(vm, vm->memo_len);
            break;
        default: {
            char what[96];
            vm->p--;
            snprintf(what, sizeof what, "pickle: unsupported opcode 0x%02x (not a NeMo packed-sequence file?)", op);
            return npy_fail(vm, NP_E_INVALID, what);
        }
        }
    }
    return st;
}

/* The header dict: {'descr': '|O', 'fortran_order': False, 'shape': (N,), } */
static enum np_status npy_header(const unsigned char *buf, size_t len, const char *name, size_t *payload,
                                 struct np_error *err)
{
    static const unsigned char magic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
    if (len < 10 || memcmp(buf, magic, 6) != 0)
        return np_error_set(err, NP_E_INVALID, name, 0, 0, "not a NumPy .npy file (no \\x93NUMPY magic)");
    unsigned major = buf[6];
    size_t hl, off;
    if (major == 1) {
        hl = (size_t)npy_le(buf + 8, 2);
        off = 10;
    } else if (major == 2 || major == 3) {
        if (len < 12)
            return np_error_set(err, NP_E_INVALID, name, 0, 0, "truncated .npy header");
        hl = (size_t)npy_le(buf + 8, 4);
        off = 12;
    } else {
        return np_error_set(err, NP_E_INVALID, name, 0, 7, ".npy format version %u is not 1, 2 or 3", major);
    }
    if (hl > len - off)
        return np_error_set(err, NP_E_INVALID, name, 0, 0, "truncated .npy header (%zu bytes announced)", hl);
    const char *h = (const char *)buf + off;
    const char *d = memmem(h, hl, "'descr':", 8);
    if (!d)
        return np_error_set(err, NP_E_INVALID, name, 0, (int)off + 1, ".npy header without 'descr'");
    d += 8;
    while (d < h + hl && *d == ' ')
        d++;
    const char *q = d < h + hl && *d == '\'' ? memchr(d + 1, '\'', (size_t)(h + hl - d - 1)) : NULL;
    if (!q)
        return np_error_set(err, NP_E_INVALID, name, 0, (int)(d - (const char *)buf) + 1,
                            ".npy header: 'descr' is not a quoted string");
    if (q - d - 1 != 2 || memcmp(d + 1, "|O", 2) != 0)
        return np_error_set(err, NP_E_INVALID, name, 0, (int)(d - (const char *)buf) + 1,
                            "holds a '%.*s' array, not the object array of packed-sequence dicts NeMo writes",
                            (int)(q - d - 1 < 32 ? q - d - 1 : 32), d + 1);
    *payload = off + hl;
    return NP_OK;
}

static int npy_global_is(const struct npy_val *v, const char *suffix)
{
    if (v->kind != PK_GLOBAL)
        return 0;
    size_t n = strlen(suffix);
    return v->o->slen >= n && memcmp(v->o->s + v->o->slen - n, suffix, n) == 0;
}

static const struct npy_val *npy_dict_get(const struct npy_obj *d, const char *key)
{
    for (size_t i = 0; i + 1 < d->n; i += 2)
        if (npy_str_is(&d->items[i], key))
            return &d->items[i + 1];
    return NULL;
}

static enum np_status npy_collect(const struct npy_val *res, const char *name, int gbs, struct np_pack_stats *out,
                                  struct np_error *err)
{
    /* numpy.core.multiarray._reconstruct(ndarray, (0,), b'b') + BUILD
     * (version, shape, dtype, is_fortran, [objects]) */
    if (res->kind != PK_OBJ || !npy_global_is(&res->o->callable, "multiarray._reconstruct"))
        return np_error_set(err, NP_E_INVALID, name, 0, 0, "pickle does not hold a NumPy array");
    const struct npy_val *state = &res->o->state;
    if (state->kind != PK_TUPLE || state->o->n != 5 || state->o->items[4].kind != PK_LIST)
        return np_error_set(err, NP_E_INVALID, name, 0, 0, "NumPy array state is not that of an object array");
    const struct npy_obj *packs = state->o->items[4].o;
    if (packs->dropped)
        return np_error_set(err, NP_E_INVALID, name, 0, 0, "array elements are not packed-sequence dicts");
    memset(out, 0, sizeof *out);
    size_t use = gbs > 0 ? packs->n / (size_t)gbs * (size_t)gbs : packs->n;
    out->dropped = packs->n - use;
    for (size_t p = 0; p < use; p++) {
        const struct npy_val *e = &packs->items[p];
        if (e->kind != PK_DICT)
            return np_error_set(err, NP_E_INVALID, name, 0, 0, "pack %zu is not a dict", p);
        const struct npy_val *ids = npy_dict_get(e->o, "input_ids"), *ss = npy_dict_get(e->o, "seq_start_id");
        if (!ids || ids->kind != PK_LIST)
            return np_error_set(err, NP_E_INVALID, name, 0, 0, "pack %zu has no 'input_ids' list", p);
        if (!ss || ss->kind != PK_LIST || ss->o->dropped)
            return np_error_set(err, NP_E_INVALID, name, 0, 0, "pack %zu has no usable 'seq_start_id' list", p);
        const long ntok = (long)ids->o->count;
        const struct npy_obj *s = ss->o;
        if (s->n == 0 && ntok > 0)
            return np_error_set(err, NP_E_INVALID, name, 0, 0, "pack %zu: empty seq_start_id for %ld tokens", p,
                                ntok);
        double sq = 0;
        for (size_t i = 0; i < s->n; i++) {
            if (s->items[i].kind != PK_INT)
                return np_error_set(err, NP_E_INVALID, name, 0, 0, "pack %zu: seq_start_id[%zu] is not an integer",
                                    p, i);
            int64_t a = s->items[i].i;
            int64_t b = i + 1 < s->n ? (s->items[i + 1].kind == PK_INT ? s->items[i + 1].i : -1) : ntok;
            if ((i == 0 && a != 0) || b < a || b > ntok)
                return np_error_set(err, NP_E_INVALID, name, 0, 0,
                                    "pack %zu: seq_start_id is not increasing from 0 within its %ld tokens", p, ntok);
            sq += (double)(b - a) * (double)(b - a);
        }
        out->packs++;
        out->sequences += s->n;
        out->tokens += (double)ntok;
        out->sum_sq += sq;
        if (ntok > out->max_tokens)
            out->max_tokens = ntok;
    }
    return NP_OK;
}

enum np_status np_npy_pack_stats_mem(const unsigned char *buf, size_t len, const char *name, int gbs,
                                     struct np_pack_stats *out, struct np_error *err)
{
    size_t payload = 0;
    enum np_status st = npy_header(buf, len, name, &payload, err);
    if (st != NP_OK)
        return st;
    struct npy_vm vm = {.p = buf + payload, .end = buf + len, .base = buf, .name = name, .err = err};
    struct npy_val res = {.kind = PK_NONE};
    st = npy_run(&vm, &res);
    if (st == NP_OK)
        st = npy_collect(&res, name, gbs, out, err);
    npy_free_all(&vm);
    return st;
}

/* Read, not mapped: a file truncated while it is mapped kills the reader with SIGBUS (issue 23);
 * a FIFO in its place is refused, not waited on. */
#define NPY_READ_MAX ((size_t)16 << 30)

enum np_status np_npy_pack_stats(const char *path, int gbs, struct np_pack_stats *out, struct np_error *err)
{
    unsigned char *buf = NULL;
    size_t len = 0;
    enum np_status st = np_file_read_all(path, NPY_READ_MAX, &buf, &len, err);
    if (st != NP_OK)
        return st;
    if (len == 0)
        st = np_error_set(err, NP_E_INVALID, path, 0, 0, "empty file: not a NumPy .npy file");
    else
        st = np_npy_pack_stats_mem(buf, len, path, gbs, out, err);
    free(buf);
    return st;
}

void np_pack_means(const struct np_pack_stats *s, double *tokens_per_pack, double *sum_sq_per_pack)
{
    *tokens_per_pack = *sum_sq_per_pack = 0;
    if (!s || s->packs == 0)
        return;
    const double n = (double)s->packs, seqs = (double)s->sequences;
    *tokens_per_pack = (s->tokens - seqs) / n;
    *sum_sq_per_pack = (s->sum_sq - 2 * s->tokens + seqs) / n;
}
