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

// report other module error message by module type and no rt log
#define RT_LOG_CALL_MSG_NO_RT_LOG(module_type, format, ...)                                 \
    do {                                                                                    \
        REPORT_CALL_ERROR(RT_MODULE_TYPE_TO_ERR_MSG[(module_type)], format, ##__VA_ARGS__); \
    } while (false)

// report outer error message, such as invalid parameter
#define RT_LOG_OUTER_MSG(error_code, format, ...)                                                                     \
    do {                                                                                                              \
        RT_LOG(RT_LOG_ERROR, format, ##__VA_ARGS__);                                                                  \
        std::vector<char> value_string(LIMIT_PER_MESSAGE, '\0');                                                      \
        if (error_message::FormatErrorMessage(value_string.data(), value_string.size(), format, ##__VA_ARGS__) > 0) { \
            ReportErrMsg((error_code), value_string);                                                                 \
        }                                                                                                             \
    } while (false)

constexpr const char* ErrorCodeToString(ErrorCode code)
{
#undef RT_ERR_TO_STR
#define RT_ERR_TO_STR(code, name, params, msg, level) \
    case ErrorCode::code:                             \
        return name;
    switch (code) {
        RUNTIME_ERROR_CODE_TABLE(RT_ERR_TO_STR)
        default:
            return "UNKNOWN";
    }
#undef RT_ERR_TO_STR
}

inline std::string MakeStr() { return ""; }
inline std::string MakeStr(std::nullptr_t) { return ""; }
inline std::string MakeStr(const char* s) { return (s != nullptr) ? s : ""; }
inline std::string MakeStr(const std::string& s) { return s; }
inline std::string MakeStr(std::string&& s) { return std::move(s); }
template <typename T, std::enable_if_t<std::is_arithmetic_v<T> || std::is_enum_v<T>, int> = 0>
inline std::string MakeStr(T v)
{
    std::ostringstream oss;
    if constexpr (std::is_same_v<std::decay_t<T>, int8_t> || std::is_same_v<std::decay_t<T>, uint8_t>) {
        oss << static_cast<int>(v);
    } else {
        oss << v;
    }
    return oss.str();
}
inline std::string MakeStr(const void* p)
{
    if (p == nullptr) {
        return "";
    }
    std::ostringstream oss;
    oss << p;
    return oss.str();
}

#define RT_ERRVAL_M1(a) cce::runtime::MakeStr(a)
#define RT_ERRVAL_M2(a, b) cce::runtime::MakeStr(a), cce::runtime::MakeStr(b)
#define RT_ERRVAL_M3(a, b, c) cce::runtime::MakeStr(a), cce::runtime::MakeStr(b), cce::runtime::MakeStr(c)
#define RT_ERRVAL_M4(a, b, c, d) \
    cce::runtime::MakeStr(a), cce::runtime::MakeStr(b), cce::runtime::MakeStr(c), cce::runtime::MakeStr(d)
#define RT_ERRVAL_M5(a, b, c, d, e)                                                                         \
    cce::runtime::MakeStr(a), cce::runtime::MakeStr(b), cce::runtime::MakeStr(c), cce::runtime::MakeStr(d), \
        cce::runtime::MakeStr(e)
#define RT_ERRVAL_M6(a, b, c, d, e, f)                                                                      \
    cce::runtime::MakeStr(a), cce::runtime::MakeStr(b), cce::runtime::MakeStr(c), cce::runtime::MakeStr(d), \
        cce::runtime::MakeStr(e), cce::runtime::MakeStr(f)
#define RT_ERRVAL_CAT_I(a, b) a##b
#define RT_ERRVAL_CAT(a, b) RT_ERRVAL_CAT_I(a, b)
#define RT_ERRVAL_GET(_0, _1, _2, _3, _4, _5, _6, N, ...) N
#define RT_ERRVAL_COUNT(...) RT_ERRVAL_GET(0, ##__VA_ARGS__, 6, 5, 4, 3, 2, 1, 0)
#define RT_ERRVAL_DISPATCH(N, ...) RT_ERRVAL_CAT(RT_ERRVAL_M, N)(__VA_ARGS__)
#define RT_ERRVAL_VALUES(...) RT_ERRVAL_DISPATCH(RT_ERRVAL_COUNT(__VA_ARGS__), __VA_ARGS__)

inline void ErrorCodeProcess(
    ErrorCode errorCode, const char* file, const int32_t line, const char* func, const std::vector<std::string>& values)
{
#if (!defined(WIN32)) && (!defined(CFG_DEV_PLATFORM_PC))
    ProcessErrorCodeImpl(errorCode, file, line, func, values);
    ErrorManager::GetInstance().ATCReportErrMessage(ErrorCodeToString(errorCode), GetParamNames(errorCode), values);
#else
    (void)errorCode;
    (void)file;
    (void)line;
    (void)func;
    (void)values;
#endif
}

// EE1003错误码上报
#define RT_LOG_OUTER_MSG_INVALID_PARAM(parm, ...) \
    RT_LOG_OUTER_MSG_WITH_FUNC(ErrorCode::EE1003, (parm), #parm, ##__VA_ARGS__)

// EE1003错误码上报，带语义化函数描述
#define RT_LOG_OUTER_MSG_INVALID_PARAM_WITH_DESC(funcDesc, parm, ...) \
    RT_LOG_OUTER_MSG_WITH_FUNC_DESC(ErrorCode::EE1003, funcDesc, (parm), #parm, ##__VA_ARGS__)

#define RT_LOG_OUTER_MSG_WITH_FUNC(error_code, ...) RT_LOG_OUTER_MSG_IMPL((error_code), __func__, ##__VA_ARGS__)

#define RT_LOG_OUTER_MSG_WITH_FUNC_DESC(error_code, funcDesc, ...) \
    RT_LOG_OUTER_MSG_IMPL((error_code), funcDesc, ##__VA_ARGS__)

// 由调用者保证传参个数和errmsg匹配
#define RT_LOG_OUTER_MSG_IMPL(error_code, ...)                                                                \
    do {                                                                                                      \
        ErrorCodeProcess((error_code), __FILE__, __LINE__, &__func__ [0], { RT_ERRVAL_VALUES(__VA_ARGS__) }); \
    } while (false)
