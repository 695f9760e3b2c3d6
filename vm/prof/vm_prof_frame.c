/* vm_prof_frame.c: the events of a Lua frame's start and end for JIT-compiled code's calls
 * and returns made through C helpers (jit/), the same as the instrumented interpreter's
 * (vm_prof.h, "Frame events"). */
#include "vm_prof.h"

void vm_prof_frame_start(State *S, CallInfo *ci) {
    vm_prof_frame_start_events(S, ci);
    vm_prof_frame_back(ci);
}

/* Called before the results move (jit/), so ci->func is still the function. */
void vm_prof_frame_exit(CallInfo *ci, bool ret) { vm_prof_frame_exit_events(ci, ci->func->u.lf->p->id, ret); }

void vm_prof_frame_back(CallInfo *ci) { vm_prof_reserve_frame(ci->func->u.lf->p); }
