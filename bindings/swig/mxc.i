/* The one SWIG interface of mxc, shared by the Java, Go and R bindings.
 *
 * What SWIG wraps is the binding layer in mxcb.h (functions that return
 * their result and flag failures per thread), not mxc.h directly: see the
 * comment at the top of mxcb.h for why. From mxc.h only the constants
 * (MXC_DTYPE_*, MXC_ERR_*, MXC_REQ_*, ...) and the handle types are taken.
 *
 * A language file (bindings/java/mxc_java.i,
 * bindings/go/internal/cmxc/cmxc.swig, bindings/r/mxc_r.i) does, in this
 * order:
 *   1. %module NAME (and any module options);
 *   2. typemaps for the multi-argument conventions listed in mxcb.h
 *      (HANDLES, SYMBOLS, KV, NAMES, DIMS, BYTES, BYTES_OUT, DATA, DATA_OUT,
 *      FLOATS, FLOATS_OUT);
 *   3. optionally #define MXCB_CUSTOM_EXCEPTION and its own %exception
 *      (e.g. a Java MxcException carrying the code) -- without it, a
 *      failure becomes SWIG_exception(SWIG_RuntimeError, message), i.e.
 *      RuntimeException in Java, an R error, a panic in Go;
 *   4. %include "mxc.i".
 *
 * Naming: mxcb_ndarray_create is wrapped as ndarray_create (the prefix is
 * stripped; the language module name provides the namespace). Internal
 * helpers (mxcb__*) are not wrapped.
 *
 * Ownership: functions marked %newobject below return a new handle owned
 * by the caller; the handle classes (NDArrayHandle, SymbolHandle, ...)
 * carry destructors that free it. Operator handles (OpHandle) are static.
 */

%{
#include "mxcb.h"
%}

/* int64_t is a long on every platform mxc builds for (LP64); without this
 * stdint.i declares it long long and the wrappers pass long long * where
 * mxcb.h takes const int64_t *. */
#ifndef SWIGWORDSIZE64
#define SWIGWORDSIZE64
#endif
%include <stdint.i>
%include <exception.i>

/* Only constants and handle types come from mxc.h. */
%rename("$ignore", %$isfunction, regexmatch$name="^mxc_") "";
%rename("$ignore", regexmatch$name="^mxcb__") "";
%rename("$ignore", regexmatch$name="^MXCB__") "";
%rename("$ignore", regexmatch$name="^MXC_API") "";
%rename("$ignore", regexmatch$name="_H_$") "";
/* Custom operators (C callbacks) are not wrapped yet: their structs and
 * callback types stay out of the Java, Go and R modules. */
%rename("$ignore", regexmatch$name="^mxc_custom_") "";
/* Nor the KVStore's updater callback (C and Python only). */
%rename("$ignore", regexmatch$name="^mxc_kvstore_updater") "";
/* A block's forward pass and fit's listeners call back into the language:
 * each language file wraps the listener its own way (mxc_java.i,
 * cmxc.swig); the C callback types stay out. */
%rename("$ignore", regexmatch$name="^mxc_block_forward_fn") "";
%rename("$ignore", regexmatch$name="^mxc_fit_listener_fn") "";
%rename("%(strip:[mxcb_])s", regexmatch$name="^mxcb_[a-z]") "";

/* Handles as classes with destructors. The structs are opaque in C: the
 * empty bodies below only tell SWIG to make proxy classes; no wrapper ever
 * allocates or reads one (no default constructors). */
%nodefaultctor;
%rename(NDArrayHandle) mxc_ndarray_s;
%rename(SymbolHandle) mxc_symbol_s;
%rename(ExecutorHandle) mxc_executor_s;
%rename(DataIterHandle) mxc_data_iter_s;
%rename(RecordIOHandle) mxc_recordio_s;
%rename(StrListHandle) mxc_str_list_s;
%rename(OpHandle) mxc_op_s;
%rename(OutputsHandle) mxcb_outputs;
%rename(CheckpointHandle) mxcb_checkpoint;
%rename(PredictorHandle) mxc_predictor_s;
%rename(PredictorSpecHandle) mxcb_predictor_spec;
%rename(KVStoreHandle) mxc_kvstore_s;
%rename(ScopeHandle) mxc_scope_s;
%rename(BlockHandle) mxc_block_s;
%rename(OptimizerHandle) mxc_optimizer_s;
%rename(FitHandle) mxc_fit_s;
/* A scope is ended explicitly (scope_end), never by a destructor: it must
 * end on its own thread, innermost first. */
%nodefaultdtor mxc_scope_s;
/* Operator handles are static: no destructor (declared before the struct,
 * or SWIG makes one that would free() a static record). */
%nodefaultdtor mxc_op_s;
struct mxc_ndarray_s {};
struct mxc_symbol_s {};
struct mxc_executor_s {};
struct mxc_data_iter_s {};
struct mxc_recordio_s {};
struct mxc_str_list_s {};
struct mxc_op_s {};
struct mxcb_outputs {};
struct mxcb_checkpoint {};
struct mxc_predictor_s {};
struct mxcb_predictor_spec {};
struct mxc_kvstore_s {};
struct mxc_scope_s {};
struct mxc_block_s {};
struct mxc_optimizer_s {};
struct mxc_fit_s {};
%extend mxc_ndarray_s { ~mxc_ndarray_s() { mxc_ndarray_free($self); } }
%extend mxc_symbol_s { ~mxc_symbol_s() { mxc_symbol_free($self); } }
%extend mxc_executor_s { ~mxc_executor_s() { mxc_executor_free($self); } }
%extend mxc_data_iter_s { ~mxc_data_iter_s() { mxc_data_iter_free($self); } }
%extend mxc_recordio_s { ~mxc_recordio_s() { mxc_recordio_free($self); } }
%extend mxc_str_list_s { ~mxc_str_list_s() { mxc_str_list_free($self); } }
%extend mxcb_outputs { ~mxcb_outputs() { mxcb_outputs_free($self); } }
%extend mxcb_checkpoint {
  ~mxcb_checkpoint() { mxcb_checkpoint_free($self); }
}
%extend mxc_predictor_s { ~mxc_predictor_s() { mxc_predictor_free($self); } }
%extend mxcb_predictor_spec {
  ~mxcb_predictor_spec() { mxcb_predictor_spec_free($self); }
}
%extend mxc_kvstore_s { ~mxc_kvstore_s() { mxc_kvstore_free($self); } }
%extend mxc_block_s { ~mxc_block_s() { mxc_block_free($self); } }
%extend mxc_optimizer_s { ~mxc_optimizer_s() { mxc_optimizer_free($self); } }
%extend mxc_fit_s { ~mxc_fit_s() { mxc_fit_free($self); } }
%clearnodefaultctor;

/* New objects: the caller owns the result. */
%newobject mxcb_ndarray_create;
%newobject mxcb_ndarray_create_on;
%newobject mxcb_ndarray_reshape;
%newobject mxcb_ndarray_slice;
%newobject mxcb_ndarray_at;
%newobject mxcb_ndarray_detach;
%newobject mxcb_op_invoke;
%newobject mxcb_op_invoke_multi;
%newobject mxcb_outputs_take;
%newobject mxcb_autograd_grad;
%newobject mxcb_symbol_variable;
%newobject mxcb_symbol_op;
%newobject mxcb_symbol_group;
%newobject mxcb_symbol_from_json;
%newobject mxcb_symbol_to_json;
%newobject mxcb_symbol_list_arguments;
%newobject mxcb_symbol_list_outputs;
%newobject mxcb_executor_simple_bind;
%newobject mxcb_executor_simple_bind_on;
%newobject mxcb_executor_output;
%newobject mxcb_executor_arg;
%newobject mxcb_executor_grad;
%newobject mxcb_executor_aux;
%newobject mxcb_data_iter_idx;
%newobject mxcb_data_iter_idx_layout;
%newobject mxcb_data_iter_csv;
%newobject mxcb_data_iter_data;
%newobject mxcb_data_iter_label;
%newobject mxcb_data_iter_image_record;
%newobject mxcb_recordio_open;
%newobject mxcb_image_decode;
%newobject mxcb_checkpoint_load;
%newobject mxcb_checkpoint_take_symbol;
%newobject mxcb_checkpoint_array;
%newobject mxcb_predictor_spec_new;
%newobject mxcb_predictor_create;
%newobject mxcb_predictor_load;
%newobject mxcb_predictor_clone;
%newobject mxcb_predictor_reshape;
%newobject mxcb_predictor_output;
%newobject mxcb_profiler_dumps;
%newobject mxcb_profiler_stats;
%newobject mxcb_kvstore_create;
%newobject mxcb_handle_dump;
%newobject mxcb_block_create;
%newobject mxcb_block_child;
%newobject mxcb_block_forward;
%newobject mxcb_block_param;
%newobject mxcb_block_param_grad;
%newobject mxcb_optimizer_create;
%newobject mxcb_fit_create;
/* Strings made by mxc are freed by mxc. */
%typemap(newfree) char * "mxc_string_free($1);";

/* Errors: every wrapped call that can fail is followed by a check of the
 * calling thread's flag, in the same native call (the message is
 * thread-local, so it must be read before control returns). */
#ifndef MXCB_CUSTOM_EXCEPTION
%exception {
  $action
  if (mxcb_last_code() != 0) {
    SWIG_exception(SWIG_RuntimeError, mxcb_last_message());
  }
}
#endif
/* These never fail (and the error getters must not reset the flag). */
%noexception mxcb_last_code;
%noexception mxcb_last_message;
%noexception mxcb_error_name;
%noexception mxcb_version;
%noexception mxcb_version_string;
%noexception mxcb_dtype_size;
%noexception mxcb_ndarray_free;
%noexception mxcb_symbol_free;
%noexception mxcb_executor_free;
%noexception mxcb_data_iter_free;
%noexception mxcb_recordio_free;
%noexception mxcb_str_list_free;
%noexception mxcb_outputs_free;
%noexception mxcb_outputs_size;
%noexception mxcb_predictor_free;
%noexception mxcb_checkpoint_free;
%noexception mxcb_predictor_spec_free;
%noexception mxcb_kvstore_free;
%noexception mxcb_block_free;
%noexception mxcb_optimizer_free;
%noexception mxcb_fit_free;
/* Destructors neither fail nor reset the flag: without these, freeing an
 * object right after a failed call would raise that failure again. */
%noexception mxc_ndarray_s::~mxc_ndarray_s;
%noexception mxc_symbol_s::~mxc_symbol_s;
%noexception mxc_executor_s::~mxc_executor_s;
%noexception mxc_data_iter_s::~mxc_data_iter_s;
%noexception mxc_recordio_s::~mxc_recordio_s;
%noexception mxc_str_list_s::~mxc_str_list_s;
%noexception mxcb_outputs::~mxcb_outputs;
%noexception mxc_predictor_s::~mxc_predictor_s;
%noexception mxcb_predictor_spec::~mxcb_predictor_spec;
%noexception mxc_kvstore_s::~mxc_kvstore_s;
%noexception mxc_block_s::~mxc_block_s;
%noexception mxc_optimizer_s::~mxc_optimizer_s;
%noexception mxc_fit_s::~mxc_fit_s;

#define MXC_API
%include "mxc/mxc.h"
%include "mxcb.h"
