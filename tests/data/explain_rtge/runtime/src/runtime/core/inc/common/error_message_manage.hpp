
// Do NOT use this Marco directly
#define COND_RETURN_MSG_(TYPE, COND, ERRCODE, LOGTYPE, format, ...) \
    if (unlikely(COND)) {                                           \
        RT_LOG_##TYPE##_MSG(LOGTYPE, format, ##__VA_ARGS__);        \
        return ERRCODE;                                             \
    }
// Do NOT use this Marco directly
#define COND_PROC_RETURN_MSG_(TYPE, COND, ERRCODE, PROC, LOGTYPE, format, ...) \
    if (unlikely(COND)) {                                                      \
        PROC;                                                                  \
        RT_LOG_##TYPE##_MSG(LOGTYPE, format, ##__VA_ARGS__);                   \
        return ERRCODE;                                                        \
    }

// Do NOT use this Marco directly
#define COND_GOTO_ERROR_MSG_AND_ASSIGN_(TYPE, COND, LABEL, ERROR, ERRCODE, format, ...) \
    if (unlikely(COND)) {                                                               \
        RT_LOG_##TYPE##_MSG(RT_LOG_ERROR, format, ##__VA_ARGS__);                       \
        (ERROR) = static_cast<rtError_t>(ERRCODE);                                      \
        goto LABEL;                                                                     \
    }

// Do NOT use this Marco directly
#define NULL_PTR_GOTO_MSG_(TYPE, PTR, LABEL, ERROR, ERRCODE) \
    COND_GOTO_ERROR_MSG_AND_ASSIGN_(                         \
        TYPE, (PTR) == nullptr, LABEL, ERROR, ERRCODE, "Check param failed, " #PTR " can not be NULL!")

// Do NOT use this Marco directly
#define COND_RETURN_ERROR_MSG_(TYPE, COND, ERRCODE, format, ...) \
    COND_RETURN_MSG_(TYPE, (COND), ERRCODE, RT_LOG_ERROR, format, ##__VA_ARGS__)

// Do NOT use this Marco directly
#define COND_RETURN_CALL_MSG_(TYPE, COND, ERRCODE, format, ...) \
    COND_RETURN_MSG_(TYPE, (COND), ERRCODE, ERR_MODULE_GE, format, ##__VA_ARGS__)

// Do NOT use this Marco directly
#define ERROR_RETURN_MSG_(TYPE, ERRCODE, format, ...) \
    COND_RETURN_ERROR_MSG_(TYPE, (ERRCODE) != RT_ERROR_NONE, ERRCODE, format, ##__VA_ARGS__)

// Do NOT use this Marco directly
#define COND_PROC_GOTO_MSG_(TYPE, COND, LABEL, PROC, format, ...) \
    if (unlikely(COND)) {                                         \
        PROC;                                                     \
        RT_LOG_##TYPE##_MSG(RT_LOG_ERROR, format, ##__VA_ARGS__); \
        goto LABEL;                                               \
    }
// Do NOT use this Marco directly
#define ERROR_PROC_GOTO_MSG_(TYPE, ERRCODE, LABEL, PROC, format, ...) \
    COND_PROC_GOTO_MSG_(TYPE, (ERRCODE) != RT_ERROR_NONE, LABEL, PROC, format, ##__VA_ARGS__)
// Do NOT use this Marco directly
#define ERROR_GOTO_MSG_(TYPE, ERRCODE, LABEL, format, ...) \
    ERROR_PROC_GOTO_MSG_(TYPE, ERRCODE, LABEL, , format, ##__VA_ARGS__)

// Do NOT use this Marco directly
#define COND_PROC_RETURN_ERROR_MSG_(TYPE, COND, ERRCODE, PROC, format, ...) \
    COND_PROC_RETURN_MSG_(TYPE, (COND), ERRCODE, PROC, RT_LOG_ERROR, format, ##__VA_ARGS__)

// Do NOT use this Marco directly
#define NULL_PTR_PROC_RETURN_ERROR_MSG_(TYPE, PTR, ERR, LOGTYPE, PROC)                      \
    if (unlikely((PTR) == nullptr)) {                                                       \
        PROC RT_LOG_##TYPE##_MSG(LOGTYPE, "Check param failed, " #PTR " can not be null."); \
        return ERR;                                                                         \
    }

#define NULL_PTR_PROC_RETURN_ERROR_MSG_INNER(PTR, ERR, PROC) \
    NULL_PTR_PROC_RETURN_ERROR_MSG_(INNER, PTR, ERR, RT_LOG_ERROR, (PROC))

#define COND_PROC_RETURN_ERROR_MSG_INNER(COND, ERRCODE, PROC, format, ...) \
    COND_PROC_RETURN_ERROR_MSG_(INNER, COND, ERRCODE, PROC, format, ##__VA_ARGS__)

#define ERROR_PROC_RETURN_MSG_INNER(ERRCODE, PROC, format, ...) \
    COND_PROC_RETURN_ERROR_MSG_(INNER, (ERRCODE != RT_ERROR_NONE), ERRCODE, PROC, format, ##__VA_ARGS__)

#define ERROR_GOTO_MSG_INNER(ERRCODE, LABEL, format, ...) ERROR_GOTO_MSG_(INNER, ERRCODE, LABEL, format, ##__VA_ARGS__)

#define ERROR_PROC_GOTO_MSG_INNER(ERRCODE, LABEL, PROC, format, ...) \
    ERROR_PROC_GOTO_MSG_(INNER, ERRCODE, LABEL, PROC, format, ##__VA_ARGS__)

#define COND_PROC_GOTO_MSG_INNER(COND, LABEL, PROC, format, ...) \
    COND_PROC_GOTO_MSG_(INNER, COND, LABEL, PROC, format, ##__VA_ARGS__)

#define COND_RETURN_ERROR_MSG_INNER(COND, ERRCODE, format, ...) \
    COND_RETURN_ERROR_MSG_(INNER, COND, ERRCODE, format, ##__VA_ARGS__)

#define COND_GOTO_ERROR_MSG_AND_ASSIGN_INNER(COND, LABEL, ERROR, ERRCODE, format, ...) \
    COND_GOTO_ERROR_MSG_AND_ASSIGN_(INNER, COND, LABEL, ERROR, ERRCODE, format, ##__VA_ARGS__)

#define NULL_PTR_GOTO_MSG_INNER(PTR, LABEL, ERROR, ERRCODE) NULL_PTR_GOTO_MSG_(INNER, PTR, LABEL, ERROR, ERRCODE)

#define COND_GOTO_MSG_OUTER(COND, LABEL, ERROR, RTERRCODE, ERRCODE, ...) \
    if (unlikely(COND)) {                                                \
        RT_LOG_OUTER_MSG_IMPL(ERRCODE, ##__VA_ARGS__);                   \
        (ERROR) = static_cast<rtError_t>(RTERRCODE);                     \
        goto LABEL;                                                      \
    }

#define ERROR_RETURN_MSG_INNER(ERRCODE, format, ...) ERROR_RETURN_MSG_(INNER, ERRCODE, format, ##__VA_ARGS__)

