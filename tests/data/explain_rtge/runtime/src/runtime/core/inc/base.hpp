// if you want to use RT_LOG_WARNING level, your changes need to be carefully reviewed
// Other level may cause an exception log
#define RT_LOG_INNER_MSG(level, format, ...)                                         \
    do {                                                                             \
        RT_LOG(level, format, ##__VA_ARGS__);                                        \
        REPORT_INNER_ERROR(RT_LOG_LEVEL_TO_ERR_MSG[(level)], format, ##__VA_ARGS__); \
    } while (false)

// report other module error message by module type
#define RT_LOG_CALL_MSG(module_type, format, ...)                                           \
    do {                                                                                    \
        RT_LOG(RT_LOG_ERROR, format, ##__VA_ARGS__);                                        \
        REPORT_CALL_ERROR(RT_MODULE_TYPE_TO_ERR_MSG[(module_type)], format, ##__VA_ARGS__); \
    } while (false)

