/* cachekit._fastpath: the object-mode hit path of @cache(backend=None) in C.
 *
 * ObjectWrapper(memo, slow, types) is a function-like callable doing exactly
 * what the pure-Python wrapper in _decorator.py (_object_hot_path) does, which
 * stays the specification and the fallback:
 *
 *   one positional argument whose type is exactly one of `types`, no keyword
 *   arguments, memo[arg] an entry with monotonic() < entry[STALE]
 *       -> entry[HITS] += 1, return entry[VALUE]
 *   anything else -> slow(args_tuple, kwargs_dict)
 *
 * Entries are the lists of _objcache.py. Anything unexpected in an entry
 * also goes to slow(), which handles every case. monotonic() is
 * time.monotonic()'s clock; on Linux a cheap coarse reading settles entries
 * far from their stale-at time (see COARSE_MARGIN).
 *
 * Plain CPython C API, Python 3.10+, nothing from libcachekit.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stddef.h>

#if defined(__linux__)
#include <time.h>
#endif
#if PY_VERSION_HEX < 0x030D0000 && defined(__linux__)
#define CK_CLOCK_GETTIME 1 /* CPython's own time.monotonic clock on Linux */
#endif
#if defined(__linux__) && defined(CLOCK_MONOTONIC_COARSE)
#define CK_COARSE 1
#endif

/* Entry slots (_objcache.py). */
enum { E_VALUE = 0, E_HITS = 2, E_STALE = 3 };

static PyObject *one;        /* the int 1 */
static PyObject *str_qualname, *str_name;
#if PY_VERSION_HEX < 0x030D0000 && !defined(CK_CLOCK_GETTIME)
static PyObject *py_monotonic; /* time.monotonic, where its clock is not reachable from C */
#endif

/* time.monotonic() as a C double: the same clock and the same conversion, so
 * deadlines computed in Python compare consistently. */
static int
monotonic(double *out)
{
#if PY_VERSION_HEX >= 0x030D0000
    PyTime_t t;
    if (PyTime_Monotonic(&t) < 0) {
        return -1;
    }
    *out = PyTime_AsSecondsDouble(t);
    return 0;
#elif defined(CK_CLOCK_GETTIME)
    /* CPython's pytime.c on Linux: CLOCK_MONOTONIC in int64 nanoseconds, then
     * _PyTime_AsSecondsDouble (volatile keeps its rounding). */
    struct timespec ts;
    volatile double d;
    if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0) {
        PyErr_SetFromErrno(PyExc_OSError);
        return -1;
    }
    int64_t ns = (int64_t)ts.tv_sec * 1000000000 + (int64_t)ts.tv_nsec;
    if (ns % 1000000000 == 0) {
        d = (double)(ns / 1000000000);
    }
    else {
        d = (double)ns;
        d /= 1e9;
    }
    *out = d;
    return 0;
#else
    PyObject *r = PyObject_CallNoArgs(py_monotonic);
    if (r == NULL) {
        return -1;
    }
    *out = PyFloat_AsDouble(r);
    Py_DECREF(r);
    return (*out == -1.0 && PyErr_Occurred()) ? -1 : 0;
#endif
}

#ifdef CK_COARSE
/* Reading CLOCK_MONOTONIC costs ~30 ns on some VMs (kvm-clock), about as much
 * as the rest of a hit; CLOCK_MONOTONIC_COARSE costs a few. It is the same
 * clock as of the kernel's last timekeeping update: never ahead of
 * monotonic(), behind by up to a tick (a few ms). With that lag under
 * COARSE_MARGIN, coarse + COARSE_MARGIN < stale_at implies monotonic() <
 * stale_at, so the decision stays monotonic()'s; entries within the margin
 * of their stale-at time take the precise read. */
#define COARSE_MARGIN 1.0

static inline double
coarse_monotonic(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_MONOTONIC_COARSE, &ts) != 0) {
        return -1e300; /* proves nothing: the precise read decides */
    }
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
#else
#define COARSE_MARGIN 0.0
#endif

typedef struct {
    PyObject_HEAD
    PyObject *memo;         /* the ObjectCache's dict (an OrderedDict) */
    PyObject *slow;         /* slow(args, kwargs): everything but a fresh hit */
    PyObject *types;        /* tuple of the exact argument types keyed directly */
    PyObject *dict;         /* __dict__: functools.wraps, cache_info, ... */
    PyObject *weakreflist;
    vectorcallfunc vectorcall;
} ObjectWrapper;

static PyObject *
call_slow(ObjectWrapper *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    if (self->slow == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "cachekit: cleared wrapper called");
        return NULL;
    }
    PyObject *tuple = PyTuple_New(nargs);
    if (tuple == NULL) {
        return NULL;
    }
    for (Py_ssize_t i = 0; i < nargs; i++) {
        PyTuple_SET_ITEM(tuple, i, Py_NewRef(args[i]));
    }
    PyObject *kwargs = PyDict_New();
    if (kwargs == NULL) {
        Py_DECREF(tuple);
        return NULL;
    }
    Py_ssize_t nkw = kwnames == NULL ? 0 : PyTuple_GET_SIZE(kwnames);
    for (Py_ssize_t i = 0; i < nkw; i++) {
        if (PyDict_SetItem(kwargs, PyTuple_GET_ITEM(kwnames, i), args[nargs + i]) < 0) {
            Py_DECREF(tuple);
            Py_DECREF(kwargs);
            return NULL;
        }
    }
    PyObject *stack[2] = {tuple, kwargs};
    PyObject *r = PyObject_Vectorcall(self->slow, stack, 2, NULL);
    Py_DECREF(tuple);
    Py_DECREF(kwargs);
    return r;
}

static inline int
is_simple(ObjectWrapper *self, PyTypeObject *tp)
{
    /* Exact identity: bool, float and subclasses take the slow path (their
     * keys compare equal to ints'). */
    Py_ssize_t n = PyTuple_GET_SIZE(self->types);
    for (Py_ssize_t i = 0; i < n; i++) {
        if ((PyObject *)tp == PyTuple_GET_ITEM(self->types, i)) {
            return 1;
        }
    }
    return 0;
}

/* 1 and the new reference in *out on a fresh hit, 0 to go the slow way, -1
 * on error. */
static int
try_hit(ObjectWrapper *self, PyObject *arg, PyObject **out)
{
    /* The dict's own storage: OrderedDict does not override lookups (get and
     * __getitem__ are dict's) and keeps its order outside of it. */
    PyObject *e = PyDict_GetItemWithError(self->memo, arg);
    if (e == NULL) {
        return PyErr_Occurred() ? -1 : 0;
    }
    if (!PyList_CheckExact(e) || PyList_GET_SIZE(e) <= E_STALE) {
        return 0;
    }
    PyObject *stale = PyList_GET_ITEM(e, E_STALE);
    if (!PyFloat_CheckExact(stale)) {
        return 0;
    }
    double stale_at = PyFloat_AS_DOUBLE(stale);
    /* Held across the clock read: where the clock is time.monotonic itself
     * (old Pythons off Linux) the interpreter runs in between. */
    Py_INCREF(e);
    int fresh;
#ifdef CK_COARSE
    fresh = coarse_monotonic() + COARSE_MARGIN < stale_at;
    if (!fresh)
#endif
    {
        double now;
        if (monotonic(&now) < 0) {
            Py_DECREF(e);
            return -1;
        }
        fresh = now < stale_at;
    }
    int hit = 0;
    if (fresh && PyList_GET_SIZE(e) > E_STALE && PyLong_CheckExact(PyList_GET_ITEM(e, E_HITS))) {
        PyObject *n = PyNumber_Add(PyList_GET_ITEM(e, E_HITS), one);
        if (n == NULL) {
            Py_DECREF(e);
            return -1;
        }
        /* Dropping the old count (an int) runs no code: the GIL is held from
         * the lookup to here, so concurrent hits are all counted. */
        PyList_SetItem(e, E_HITS, n);
        *out = Py_NewRef(PyList_GET_ITEM(e, E_VALUE));
        hit = 1;
    }
    Py_DECREF(e);
    return hit;
}

static PyObject *
wrapper_vectorcall(PyObject *op, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    ObjectWrapper *self = (ObjectWrapper *)op;
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    if (nargs == 1 && (kwnames == NULL || PyTuple_GET_SIZE(kwnames) == 0) && self->memo != NULL
            && is_simple(self, Py_TYPE(args[0]))) {
        PyObject *r;
        int hit = try_hit(self, args[0], &r);
        if (hit < 0) {
            return NULL;
        }
        if (hit) {
            return r;
        }
    }
    return call_slow(self, args, nargs, kwnames);
}

static PyObject *
wrapper_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    PyObject *memo, *slow, *types;
    static char *kwlist[] = {"memo", "slow", "types", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O!OO:ObjectWrapper", kwlist, &PyDict_Type, &memo, &slow,
                                     &types)) {
        return NULL;
    }
    if (!PyCallable_Check(slow)) {
        PyErr_SetString(PyExc_TypeError, "ObjectWrapper: slow must be callable");
        return NULL;
    }
    PyObject *tuple = PySequence_Tuple(types);
    if (tuple == NULL) {
        return NULL;
    }
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(tuple); i++) {
        if (!PyType_Check(PyTuple_GET_ITEM(tuple, i))) {
            Py_DECREF(tuple);
            PyErr_SetString(PyExc_TypeError, "ObjectWrapper: types must hold types");
            return NULL;
        }
    }
    ObjectWrapper *self = (ObjectWrapper *)type->tp_alloc(type, 0);
    if (self == NULL) {
        Py_DECREF(tuple);
        return NULL;
    }
    self->memo = Py_NewRef(memo);
    self->slow = Py_NewRef(slow);
    self->types = tuple;
    self->dict = NULL;
    self->weakreflist = NULL;
    self->vectorcall = wrapper_vectorcall;
    return (PyObject *)self;
}

static int
wrapper_traverse(PyObject *op, visitproc visit, void *arg)
{
    ObjectWrapper *self = (ObjectWrapper *)op;
    Py_VISIT(self->memo);
    Py_VISIT(self->slow);
    Py_VISIT(self->types);
    Py_VISIT(self->dict);
    return 0;
}

static int
wrapper_clear(PyObject *op)
{
    ObjectWrapper *self = (ObjectWrapper *)op;
    Py_CLEAR(self->memo);
    Py_CLEAR(self->slow);
    Py_CLEAR(self->types);
    Py_CLEAR(self->dict);
    return 0;
}

static void
wrapper_dealloc(PyObject *op)
{
    PyObject_GC_UnTrack(op);
    if (((ObjectWrapper *)op)->weakreflist != NULL) {
        PyObject_ClearWeakRefs(op);
    }
    wrapper_clear(op);
    Py_TYPE(op)->tp_free(op);
}

/* Bound like a function: a method gets its instance as the first argument. */
static PyObject *
wrapper_descr_get(PyObject *self, PyObject *obj, PyObject *Py_UNUSED(type))
{
    if (obj == NULL || obj == Py_None) {
        return Py_NewRef(self);
    }
    return PyMethod_New(self, obj);
}

/* __qualname__ (set by functools.wraps), else __name__; NULL without an error
 * when neither is there. */
static PyObject *
wrapper_name(PyObject *self)
{
    PyObject *name = PyObject_GetAttr(self, str_qualname);
    if (name == NULL && PyErr_ExceptionMatches(PyExc_AttributeError)) {
        PyErr_Clear();
        name = PyObject_GetAttr(self, str_name);
        if (name == NULL && PyErr_ExceptionMatches(PyExc_AttributeError)) {
            PyErr_Clear();
        }
    }
    return name;
}

static PyObject *
wrapper_repr(PyObject *self)
{
    PyObject *name = wrapper_name(self);
    if (name == NULL) {
        if (PyErr_Occurred()) {
            return NULL;
        }
        return PyUnicode_FromFormat("<cachekit function at %p>", self);
    }
    /* As functions are shown (the pure-Python wrapper is one). */
    PyObject *r = PyUnicode_FromFormat("<function %S at %p>", name, self);
    Py_DECREF(name);
    return r;
}

/* Pickled by reference, like functions: the global named __qualname__ in
 * __module__ (pickle checks it is this very object). */
static PyObject *
wrapper_reduce(PyObject *self, PyObject *Py_UNUSED(ignored))
{
    PyObject *name = wrapper_name(self);
    if (name == NULL && !PyErr_Occurred()) {
        PyErr_Format(PyExc_TypeError, "cannot pickle %R: it has no __qualname__", self);
    }
    return name;
}

static PyMethodDef wrapper_methods[] = {
    {"__reduce__", wrapper_reduce, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef wrapper_getset[] = {
    {"__dict__", PyObject_GenericGetDict, PyObject_GenericSetDict, NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyDoc_STRVAR(wrapper_doc,
"ObjectWrapper(memo, slow, types)\n--\n\n"
"The object-mode hit path of a function decorated with @cache(backend=None).\n"
"Calls with one positional argument of one of `types` (exact type) found fresh\n"
"in `memo` return the cached value; every other call is slow(args, kwargs).");

static PyTypeObject ObjectWrapper_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "cachekit._fastpath.ObjectWrapper",
    .tp_basicsize = sizeof(ObjectWrapper),
    .tp_dealloc = wrapper_dealloc,
    .tp_vectorcall_offset = offsetof(ObjectWrapper, vectorcall),
    .tp_repr = wrapper_repr,
    .tp_call = PyVectorcall_Call,
    .tp_getattro = PyObject_GenericGetAttr,
    .tp_setattro = PyObject_GenericSetAttr,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL | Py_TPFLAGS_METHOD_DESCRIPTOR,
    .tp_doc = wrapper_doc,
    .tp_traverse = wrapper_traverse,
    .tp_clear = wrapper_clear,
    .tp_weaklistoffset = offsetof(ObjectWrapper, weakreflist),
    .tp_methods = wrapper_methods,
    .tp_getset = wrapper_getset,
    .tp_descr_get = wrapper_descr_get,
    .tp_dictoffset = offsetof(ObjectWrapper, dict),
    .tp_new = wrapper_new,
};

static PyObject *
fastpath_monotonic(PyObject *Py_UNUSED(module), PyObject *Py_UNUSED(ignored))
{
    double now;
    if (monotonic(&now) < 0) {
        return NULL;
    }
    return PyFloat_FromDouble(now);
}

#ifdef CK_COARSE
static PyObject *
fastpath_coarse(PyObject *Py_UNUSED(module), PyObject *Py_UNUSED(ignored))
{
    return PyFloat_FromDouble(coarse_monotonic());
}
#endif

static PyMethodDef module_methods[] = {
    {"monotonic", fastpath_monotonic, METH_NOARGS, "The clock of the hit path (time.monotonic's)."},
#ifdef CK_COARSE
    {"coarse_monotonic", fastpath_coarse, METH_NOARGS,
     "The hit path's cheap lower bound of monotonic() (CLOCK_MONOTONIC_COARSE)."},
#endif
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef fastpath_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "cachekit._fastpath",
    .m_doc = "The object-mode hit path of cachekit's @cache in C (see _decorator._object_hot_path).",
    .m_size = -1,
    .m_methods = module_methods,
};

PyMODINIT_FUNC
PyInit__fastpath(void)
{
    one = PyLong_FromLong(1);
    str_qualname = PyUnicode_InternFromString("__qualname__");
    str_name = PyUnicode_InternFromString("__name__");
    if (one == NULL || str_qualname == NULL || str_name == NULL) {
        return NULL;
    }
#if PY_VERSION_HEX < 0x030D0000 && !defined(CK_CLOCK_GETTIME)
    PyObject *time_mod = PyImport_ImportModule("time");
    if (time_mod == NULL) {
        return NULL;
    }
    py_monotonic = PyObject_GetAttrString(time_mod, "monotonic");
    Py_DECREF(time_mod);
    if (py_monotonic == NULL) {
        return NULL;
    }
#endif
    PyObject *m = PyModule_Create(&fastpath_module);
    if (m == NULL) {
        return NULL;
    }
    /* 0.0 when there is no coarse pre-check (every hit reads monotonic()). */
    PyObject *margin = PyFloat_FromDouble(COARSE_MARGIN);
    int rc = PyModule_AddObjectRef(m, "COARSE_MARGIN", margin);
    Py_XDECREF(margin);
    if (rc < 0) {
        Py_DECREF(m);
        return NULL;
    }
    if (PyModule_AddType(m, &ObjectWrapper_Type) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
