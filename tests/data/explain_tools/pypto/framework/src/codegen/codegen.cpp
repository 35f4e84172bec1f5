void CodeGen::GenCode(Function& topFunc)
{
    ASSERT(FwkErr::INVALID_FUNCTION, topFunc.rootFunc_ != nullptr) << "rootFunc can not be nullptr";

    auto cg = CodeGenFactory::GetCodeGenCCE(ctx_);
    cg->GenCode(topFunc);
