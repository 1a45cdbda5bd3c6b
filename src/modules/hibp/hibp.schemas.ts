import { Type } from 'typebox';

/** Have I Been Pwned's breach model, field for field (PascalCase). A leak source is a breach. */
export const BreachSchema = Type.Object(
  {
    Name: Type.String({ description: 'The source\'s name (its identifier here).' }),
    Title: Type.String({ description: 'The source\'s name.' }),
    Domain: Type.String({ description: 'The breached site\'s domain, or "".' }),
    BreachDate: Type.String({ description: 'YYYY-MM-DD: the breach date, or the day the source was added when unknown.' }),
    AddedDate: Type.String({ description: 'When the source was added (ISO 8601, to the second, UTC).' }),
    ModifiedDate: Type.String({ description: 'When the source last changed.' }),
    PwnCount: Type.Integer({ description: 'Records in the source.' }),
    Description: Type.String(),
    LogoPath: Type.String({ description: 'Always "": threatmon keeps no logos.' }),
    DataClasses: Type.Array(Type.String(), { description: 'Have I Been Pwned\'s names of the data classes: Email addresses, Passwords...' }),
    IsVerified: Type.Boolean(),
    IsFabricated: Type.Boolean(),
    IsSensitive: Type.Boolean(),
    IsRetired: Type.Boolean({ description: 'Always false.' }),
    IsSpamList: Type.Boolean(),
    IsMalware: Type.Boolean({ description: 'True for a stealer log.' }),
    IsStealerLog: Type.Boolean({ description: 'True for a source of kind stealer_log.' }),
    IsSubscriptionFree: Type.Boolean({ description: 'Always false.' }),
  },
  { title: 'HibpBreach' },
);

export const TruncatedBreachSchema = Type.Object({ Name: Type.String() }, { title: 'HibpBreachName' });

export const SubscriptionStatusSchema = Type.Object(
  {
    SubscriptionName: Type.String({ description: 'The organization\'s plan.' }),
    Description: Type.String(),
    SubscribedUntil: Type.String({ description: 'A threatmon plan does not lapse: far in the future.' }),
    Rpm: Type.Integer({ description: 'Requests per minute of the plan (the plan limit).' }),
    DomainSearchMaxBreachedAccounts: Type.Integer({ description: 'Most addresses a domain search answers with.' }),
    MaxBreachedDomains: Type.Integer({ description: 'Most domains (active domain monitors\' terms) the plan may watch.' }),
    IncludesStealerLogs: Type.Boolean(),
    IncludesBulkDomainAdd: Type.Boolean(),
    IncludesAutoSubdomainVerification: Type.Boolean({ description: 'True: a watched domain covers its subdomains.' }),
    IncludesCustomerDomains: Type.Boolean(),
    IncludesKAnon: Type.Boolean(),
  },
  { title: 'HibpSubscriptionStatus' },
);

export const SubscribedDomainSchema = Type.Object(
  {
    DomainName: Type.String(),
    PwnCount: Type.Integer({ description: 'Breached addresses at the domain.' }),
    PwnCountExcludingSpamLists: Type.Integer(),
    PwnCountExcludingSpamListsAtLastSubscriptionRenewal: Type.Integer({ description: 'The same count: plans do not renew.' }),
    NextSubscriptionRenewal: Type.String({ description: 'Far in the future: plans do not renew.' }),
  },
  { title: 'HibpSubscribedDomain' },
);

export const HibpErrorSchema = Type.Object({ statusCode: Type.Integer(), message: Type.String() }, { title: 'HibpError', description: 'Have I Been Pwned\'s error body.' });

export const AliasesSchema = Type.Record(Type.String(), Type.Array(Type.String()), { description: 'Each alias (the part before @) and what it is in.' });
